import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createMatcher, type InlineMatcher } from "../../actors/match/matcher.ts";
import { compilePattern, matchLine, requiredPrefix } from "../../actors/match/pattern.ts";
import { MatcherError, SANDBOX_BATCH_LINES, type SandboxMatcher } from "../../actors/match/sandbox-matcher.ts";
import { validatePattern } from "../../shared/linear-regex.ts";
import { disposedAfterEach } from "../fixtures/disposed.ts";
import { waitFor } from "./helpers.ts";

const sandboxes = disposedAfterEach<SandboxMatcher>();

function inline(result: string, failure: string | null = null): InlineMatcher {
  const created = createMatcher(result, failure);
  if (!created.ok) throw new Error(created.error);
  expect(created.matcher.kind).toBe("inline");
  return created.matcher as InlineMatcher;
}

function sandbox(result: string, failure: string | null = null, batchDeadlineMs = 5_000): SandboxMatcher {
  const created = createMatcher(result, failure, { batchDeadlineMs });
  if (!created.ok) throw new Error(created.error);
  expect(created.matcher.kind).toBe("sandbox");
  const matcher = created.matcher as SandboxMatcher;
  sandboxes.push(matcher);
  return matcher;
}

describe("validatePattern", () => {
  it("rejects what does not compile, with the engine's message", () => {
    const result = validatePattern("(unclosed");
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/Invalid regular expression/);
  });

  it("says which patterns the linear-time engine takes", () => {
    expect(validatePattern("^__PI_MONITOR_RESULT__ (?<json>\\{.*\\})$")).toEqual({ ok: true, linear: true });
    expect(validatePattern("^(a+)+$")).toEqual({ ok: true, linear: true });
    expect(validatePattern("(?<=x)y")).toEqual({ ok: true, linear: true });
    expect(validatePattern("^(\\w+)=\\1$")).toEqual({ ok: true, linear: false });
    expect(validatePattern("READY(?= port)")).toEqual({ ok: true, linear: false });
  });

  it("createMatcher names the field whose pattern does not compile", () => {
    expect(createMatcher("ok", "[")).toMatchObject({ ok: false, error: expect.stringMatching(/^failure_pattern: /) });
    expect(createMatcher("(", null)).toMatchObject({ ok: false, error: expect.stringMatching(/^result_pattern: /) });
  });
});

describe("inline matching (linear-time engine)", () => {
  it("checks the failure pattern first: on one line a failure beats a success", () => {
    const matcher = inline("DONE", "FAIL");
    expect(matcher.match("DONE but FAIL", true)).toMatchObject({ kind: "failure", text: "FAIL" });
    expect(matcher.match("DONE", true)).toMatchObject({ kind: "success", text: "DONE" });
    expect(matcher.match("nothing", true)).toBeNull();
  });

  it("returns named groups, with the ones that did not take part as undefined", () => {
    const match = inline("^R (?<json>\\{.*\\})(?<tail> x)?$").match('R {"a":1}', true);
    expect(match?.groups).toEqual({ json: '{"a":1}', tail: undefined });
  });

  it("skips the success pattern when the contract no longer wants it", () => {
    const matcher = inline("DONE", "FAIL");
    expect(matcher.match("DONE", false)).toBeNull();
    expect(matcher.match("FAIL", false)).toMatchObject({ kind: "failure" });
  });

  it("uses no flags: ^ and $ anchor the line, case matters, dot stops at nothing in a line", () => {
    const matcher = inline("^ready$");
    expect(matcher.match("ready", true)).not.toBeNull();
    expect(matcher.match("READY", true)).toBeNull();
    expect(matcher.match(" ready", true)).toBeNull();
  });

  it("cannot be made to backtrack catastrophically", () => {
    const matcher = inline("^(a+)+$", "^(x+x+)+y$");
    const started = performance.now();
    expect(matcher.match(`${"a".repeat(5_000)}b`, true)).toBeNull();
    expect(matcher.match("x".repeat(5_000), true)).toBeNull();
    // Exponential backtracking would take far longer than the age of the universe; linear takes milliseconds (the
    // bound is for a loaded machine).
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});

describe("prefilters", () => {
  it("read the literal every match must begin with", () => {
    const cases: [string, { literal: string; anchored: boolean } | null][] = [
      ["^__PI_MONITOR_RESULT__ (?<json>\\{.*\\})$", { literal: "__PI_MONITOR_RESULT__ {", anchored: true }],
      ["FATAL: (?<error>.*)", { literal: "FATAL: ", anchored: false }],
      ["\\{\"ok\"", { literal: '{"ok"', anchored: false }],
      ["BUILD_OK$", { literal: "BUILD_OK", anchored: false }],
      ["ab*c", { literal: "a", anchored: false }],
      ["ab{2}", { literal: "a", anchored: false }],
      ["a?", null],
      ["READY|OK", null],
      ["(?<json>\\{.*\\})$", { literal: "{", anchored: false }],
      ["^(FATAL): (?<error>.*)", { literal: "FATAL: ", anchored: true }],
      ["(?:x)READY", { literal: "xREADY", anchored: false }],
      ["(a)\\1", { literal: "a", anchored: false }],
      ["x(ab)?c", { literal: "x", anchored: false }],
      ["(ab)*c", null],
      ["x(ab\\d)?c", { literal: "x", anchored: false }],
      ["x(a(b)c", { literal: "x", anchored: false }],
      ["(ab\\d)c", { literal: "ab", anchored: false }],
      ["x(ab(\\d)?)+c", { literal: "x", anchored: false }],
      ["x(a(b\\d)?c)d", { literal: "xa", anchored: false }],
      ["x(a[)]\\d)?", { literal: "x", anchored: false }],
      ["x(a[)]\\d)", { literal: "xa", anchored: false }],
      ["(?=READY)READY", null],
      ["(?<=x)READY", null],
      ["(?<!x)READY", null],
      ["\\dREADY", null],
      ["\\bREADY", null],
      ["[R]EADY", null],
      ["", null],
    ];
    for (const [pattern, prefix] of cases) expect(requiredPrefix(pattern), pattern).toEqual(prefix);
  });

  it("never change a verdict: with and without them the matcher agrees", () => {
    const patterns = [
      "^DONE (?<json>.*)$",
      "DONE",
      "ab*c",
      "ab?c",
      "a{2,}b",
      "^x\\.y",
      "x\\.y$",
      "😀+",
      "(?<=a)b",
      "\\$\\{HOME\\}",
      "READY|OK",
      "^\\^",
      "(?<json>\\{.*\\})$",
      "x(ab)?c",
      "x(a(b)+c)d",
      "(?:ab)c",
      "(a)\\1",
      "(ab\\d)?c",
      "x(a(b\\d)?c)d",
      "x(a[)]\\d)?",
    ];
    const lines = ["c", "ab1c", "xacd", "xab1cd", "x", "xa)1", "{}", "x{", "xc", "xabc", "xabbcd", "abc", "aa", "DONE {}", "xDONE", "ac", "abbbc", "abc", "aab", "ab", "x.y", "xzy", "zx.y", "😀😀", "\ud83d", "ab", "${HOME}", "OK", "^", ""];
    for (const source of patterns) {
      const filtered = compilePattern(source, "");
      const bare = { regex: new RegExp(source), prefilter: null };
      for (const line of lines) {
        expect(matchLine(filtered, null, line, true), `${source} on ${JSON.stringify(line)}`).toEqual(
          matchLine(bare, null, line, true),
        );
      }
    }
  });
});

describe("sandbox matching (backtracking engine in a worker)", () => {
  it("runs patterns the linear engine rejects, such as backreferences", async () => {
    const matcher = sandbox("^(?<word>\\w+)=\\k<word>$", "^(FATAL) \\1$");
    const matches = await matcher.match(["abc=abc", "abc=abd", "FATAL FATAL", "noise"], true);
    expect(matches).toEqual([
      { index: 0, match: { kind: "success", text: "abc=abc", groups: { word: "abc" } } },
      { index: 2, match: { kind: "failure", text: "FATAL FATAL", groups: null } },
    ]);
  });

  it("takes at most one batch of 64 lines at a time", async () => {
    const matcher = sandbox("^(a)\\1$");
    await expect(matcher.match(Array.from({ length: SANDBOX_BATCH_LINES + 1 }, () => "x"), true)).rejects.toThrow(MatcherError);
    const lines = Array.from({ length: SANDBOX_BATCH_LINES }, (_, i) => (i === 63 ? "aa" : `line ${i}`));
    expect(await matcher.match(lines, true)).toEqual([{ index: 63, match: { kind: "success", text: "aa", groups: null } }]);
  });

  it("prefilters lines here without a round trip, and never rules out a line that could match", () => {
    const matcher = sandbox("^READY (\\w+) \\1$", "([E])RR\\1");
    expect(matcher.mayMatch("noise", true)).toBe(true); // the failure pattern has no literal prefix
    const anchored = sandbox("^READY (\\w+) \\1$", "^FATAL (\\w) \\1");
    expect(anchored.mayMatch("noise", true)).toBe(false);
    expect(anchored.mayMatch("READY a a", true)).toBe(true);
    expect(anchored.mayMatch("READY a a", false)).toBe(false);
    expect(anchored.mayMatch("FATAL x x", false)).toBe(true);
  });

  it("cuts catastrophic backtracking at the batch deadline while this thread's timers stay on time", async () => {
    const matcher = sandbox("^(a+)+\\1b$", null, 2000);
    // A warm-up batch: the sandbox is up, so what follows measures matching, not the worker's start.
    expect(await matcher.match(["aab"], true)).toHaveLength(1);

    const lateness: number[] = [];
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      lateness.push(now - last - 20);
      last = now;
    }, 20);
    const started = performance.now();
    try {
      await expect(matcher.match(["a".repeat(40)], true)).rejects.toThrow(/longer than 2000 ms/);
    } finally {
      clearInterval(ticker);
    }
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(1990);
    expect(elapsed).toBeLessThan(15_000);
    // The ticker kept running while the pattern was stuck: this thread was never blocked for the whole 2 s (the
    // margin is for a loaded machine, where a 20 ms timer can be late by a few hundred milliseconds).
    expect(lateness.length).toBeGreaterThanOrEqual(10);
    expect(Math.max(...lateness)).toBeLessThan(1500);
    // A terminated sandbox stays failed: nothing is matched by half a matcher.
    await expect(matcher.match(["aab"], true)).rejects.toThrow(MatcherError);
  });

  it("dispose ends the worker and rejects the batch in flight", async () => {
    const matcher = sandbox("^(a+)+\\1b$", null, 10_000);
    await matcher.match(["x"], true);
    const stuck = expect(matcher.match(["a".repeat(40)], true)).rejects.toThrow(/disposed/);
    const started = performance.now();
    await matcher.dispose();
    await stuck;
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it("a sandbox given up on while it still loads fails at once and ends once it has loaded, leaving no thread", async () => {
    const threads = () => readdirSync("/proc/self/task").length;
    const before = threads();
    for (let i = 0; i < 4; i++) {
      const created = createMatcher("^(a+)+\\1b$", null, { startDeadlineMs: 1 });
      if (!created.ok || created.matcher.kind !== "sandbox") throw new Error("expected a sandbox matcher");
      const matcher = created.matcher;
      // A thread takes far longer than 1 ms to boot: the deadline passes while its modules still load.
      await expect(matcher.match(["aab"], true)).rejects.toThrow(/did not start within 1 ms/);
      await matcher.dispose();
    }
    // Ending a thread in the middle of loading its modules can abort the process; ended once loaded, each goes.
    await waitFor(() => threads() <= before, 20_000, "the sandboxes' threads to end");
  });
});

