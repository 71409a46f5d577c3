/**
 * Compiling and running the two contract patterns without letting a pattern hold the actor hostage.
 *
 * A model-supplied pattern is untrusted: a backtracking regex can run for minutes on one line, and the actor's
 * thread also owns the process, its timers and (for PTY jobs) native handles. So a pattern runs in one of two
 * places (architecture invariant 1):
 *   - inline, compiled with V8's linear-time engine (the `l` flag), when both patterns compile under it: no
 *     input can make it backtrack, so it cannot delay the actor's own timers by more than linear work;
 *   - otherwise in a sandbox worker (regex-sandbox.ts) that owns no native handles, gets lines in batches, and is
 *     terminated when a batch overruns its deadline.
 * Patterns use no flags of their own (no `u`, no `g`): lines are matched one at a time and a stateless `exec`
 * is what both places run.
 */
import type { RawMatch } from "./raw-match.ts";
import { matchLine, pattern } from "./pattern.ts";
import { createSandboxMatcher, SANDBOX_DEFAULTS, type SandboxMatcher, type SandboxOptions } from "./sandbox-matcher.ts";
import { compileLinear, validatePattern } from "../../shared/linear-regex.ts";

export interface InlineMatcher {
  readonly kind: "inline";
  match(text: string, wantSuccess: boolean): RawMatch | null;
}

export type Matcher = InlineMatcher | SandboxMatcher;

/** Where each contract runs; an `error` means a pattern does not compile at all. */
export function createMatcher(
  resultPattern: string,
  failurePattern: string | null,
  options: Partial<SandboxOptions> = {},
): { ok: true; matcher: Matcher } | { ok: false; error: string } {
  for (const [field, source] of [["result_pattern", resultPattern], ["failure_pattern", failurePattern]] as const) {
    if (source === null) continue;
    const valid = validatePattern(source);
    if (!valid.ok) return { ok: false, error: `${field}: ${valid.error}` };
  }
  const linearResult = compileLinear(resultPattern);
  const linearFailure = failurePattern === null ? null : compileLinear(failurePattern);
  if (linearResult !== null && (failurePattern === null || linearFailure !== null)) {
    const result = pattern(resultPattern, linearResult);
    const failure = failurePattern === null || linearFailure === null ? null : pattern(failurePattern, linearFailure);
    return { ok: true, matcher: { kind: "inline", match: (text, wantSuccess) => matchLine(result, failure, text, wantSuccess) } };
  }
  return { ok: true, matcher: createSandboxMatcher(resultPattern, failurePattern, { ...SANDBOX_DEFAULTS, ...options }) };
}
