/**
 * Inline matching (line-matching.ts): both patterns run on the actor's thread in V8's linear-time engine, so no line
 * can make them backtrack (architecture invariant 1). Output is framed as it arrives and each line is matched as it
 * is framed: nothing waits, the pipes are never paused, and the engine's steps need no flushing.
 *
 * Because nothing waits, lines no pattern can match need not be framed at all: every match of a pattern begins with
 * a literal (`requiredPrefix`, actors/match/pattern.ts), and `quietLines` (quiet-lines.ts) skips lines that hold none
 * of them.
 */
import type { MonitorContract } from "../../mailbox/monitor.ts";
import type { LineMatching, MatchingHost } from "./line-matching.ts";
import type { InlineMatcher } from "../match/matcher.ts";
import { requiredPrefix } from "../match/pattern.ts";
import { literalBytes } from "./quiet-lines.ts";

export function createInlineMatching(
  matcher: InlineMatcher,
  patterns: Pick<MonitorContract, "resultPattern" | "failurePattern">,
  host: MatchingHost,
): LineMatching {
  const quietLiterals = literalsToSkipBy(patterns);
  return {
    admit: (source, bytes) => host.frame(source, bytes),
    line(source, text, _bytes, partial) {
      const match = matcher.match(text, host.wantsSuccess());
      if (match !== null) host.apply({ type: "match", source, match, partial });
    },
    lineLimit: (source) => host.apply({ type: "line_limit", source }),
    idle: (source) => host.probe(source),
    quietLiterals,
    flush() {},
    discard() {},
    pending: () => ({ lines: 0, bytes: 0 }),
    drained: () => Promise.resolve(),
    dispose: () => Promise.resolve(),
  };
}

/**
 * The literals a line must hold for the patterns the contract still runs to match it (`wantSuccess` false: only the
 * failure pattern); undefined when one of those patterns begins with no usable literal, so that any line may match.
 */
export function literalsToSkipBy(
  patterns: Pick<MonitorContract, "resultPattern" | "failurePattern">,
): (wantSuccess: boolean) => Uint8Array[] | undefined {
  const bytesOf = (pattern: string): Uint8Array | null => literalBytes(requiredPrefix(pattern)?.literal ?? null);
  const result = bytesOf(patterns.resultPattern);
  const failure = patterns.failurePattern === null ? null : bytesOf(patterns.failurePattern);
  return (wantSuccess) => {
    const literals: Uint8Array[] = [];
    if (patterns.failurePattern !== null) {
      if (failure === null) return undefined;
      literals.push(failure);
    }
    if (wantSuccess) {
      if (result === null) return undefined;
      literals.push(result);
    }
    return literals;
  };
}
