import { describe, expect, it } from "vitest";
import type { ContractEvent } from "../../actors/monitor/contract.ts";
import { createInlineMatching, literalsToSkipBy } from "../../actors/monitor/inline-matching.ts";
import type { MatchingHost } from "../../actors/monitor/line-matching.ts";
import { createMatcher, type InlineMatcher } from "../../actors/match/matcher.ts";

/** A host that records what the matching asks of it. */
function recordingHost(wantSuccess = true) {
  const calls: string[] = [];
  const events: ContractEvent[] = [];
  const host: MatchingHost = {
    frame: (source, bytes) => void calls.push(`frame ${source} ${bytes === null ? "EOF" : Buffer.from(bytes).toString()}`),
    probe: (source) => void calls.push(`probe ${source}`),
    apply: (event) => void events.push(event),
    evaluating: () => true,
    wantsSuccess: () => wantSuccess,
    onBackpressure: (paused) => void calls.push(`backpressure ${paused}`),
    settled: () => void calls.push("settled"),
  };
  return { host, calls, events };
}

function inline(resultPattern: string, failurePattern: string | null = null, wantSuccess = true) {
  const created = createMatcher(resultPattern, failurePattern);
  if (!created.ok || created.matcher.kind !== "inline") throw new Error(`${resultPattern} should compile inline`);
  const recorded = recordingHost(wantSuccess);
  const patterns = { resultPattern, failurePattern };
  return { ...recorded, matching: createInlineMatching(created.matcher as InlineMatcher, patterns, recorded.host) };
}

const literalTexts = (literals: Uint8Array[] | undefined): string[] | undefined =>
  literals?.map((literal) => Buffer.from(literal).toString());

describe("inline matching", () => {
  it("frames output and EOFs the moment they are admitted, and never has anything waiting", async () => {
    const { matching, calls } = inline("READY");
    matching.admit("stdout", Buffer.from("a\nb"));
    matching.admit("stderr", null);
    matching.flush();
    expect(calls).toEqual(["frame stdout a\nb", "frame stderr EOF"]);
    expect(matching.pending()).toEqual({ lines: 0, bytes: 0 });
    await expect(matching.drained()).resolves.toBeUndefined();
  });

  it("matches each line as it comes, the failure pattern first, a partial line marked as such", () => {
    const { matching, events } = inline("^READY (?<port>\\d+)", "FATAL");
    matching.line("stdout", "compiling", 9, false);
    matching.line("stdout", "READY 8080", 10, true);
    matching.line("stderr", "READY 1 FATAL", 13, false);
    expect(events).toEqual([
      { type: "match", source: "stdout", match: { kind: "success", text: "READY 8080", groups: { port: "8080" } }, partial: true },
      { type: "match", source: "stderr", match: { kind: "failure", text: "FATAL", groups: null }, partial: false },
    ]);
  });

  it("skips the success pattern once the contract no longer wants a success", () => {
    const { matching, events } = inline("READY", "FATAL", false);
    matching.line("stdout", "READY", 5, false);
    matching.line("stdout", "FATAL", 5, false);
    expect(events.map((event) => (event.type === "match" ? event.match.kind : event.type))).toEqual(["failure"]);
  });

  it("fails an over-long line at once, and probes an idle source at once", () => {
    const { matching, calls, events } = inline("READY");
    matching.lineLimit("stderr");
    matching.idle("stdout");
    expect(events).toEqual([{ type: "line_limit", source: "stderr" }]);
    expect(calls).toEqual(["probe stdout"]);
  });
});

describe("the literals quiet lines are skipped by", () => {
  it("are the failure pattern's, and the result pattern's while a success is wanted", () => {
    const literals = literalsToSkipBy({ resultPattern: "__RESULT__ (?<json>\\{.*\\})", failurePattern: "^FATAL:" });
    expect(literalTexts(literals(true))).toEqual(["FATAL:", "__RESULT__ {"]);
    expect(literalTexts(literals(false))).toEqual(["FATAL:"]);
    expect(literalTexts(literalsToSkipBy({ resultPattern: "done", failurePattern: null })(true))).toEqual(["done"]);
    expect(literalTexts(literalsToSkipBy({ resultPattern: "done", failurePattern: null })(false))).toEqual([]);
  });

  it("are none (frame every line) when a pattern the contract still runs begins with no usable literal", () => {
    expect(literalsToSkipBy({ resultPattern: "\\d+ passed", failurePattern: null })(true)).toBeUndefined();
    expect(literalsToSkipBy({ resultPattern: "ok|done", failurePattern: "FATAL" })(true)).toBeUndefined();
    // Only the failure pattern runs once a success is no longer wanted.
    expect(literalTexts(literalsToSkipBy({ resultPattern: "\\d+ passed", failurePattern: "FATAL" })(false))).toEqual(["FATAL"]);
    expect(literalsToSkipBy({ resultPattern: "done", failurePattern: ".*error" })(false)).toBeUndefined();
    // A literal that could be half of a four-byte character cannot be searched for as bytes.
    expect(literalsToSkipBy({ resultPattern: "\ud83d", failurePattern: null })(true)).toBeUndefined();
  });
});
