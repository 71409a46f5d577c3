import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import {
  createMonitorEngine,
  ENGINE_LIMITS,
  type EngineOptions,
  type MonitorEngine,
  type ProcessEnd,
} from "../../actors/monitor/engine.ts";
import { createDiagnosticTail } from "../../actors/monitor/diagnostic-tail.ts";
import { quietLines } from "../../actors/monitor/quiet-lines.ts";
import type { LineSource, MonitorContract, MonitorOutcome } from "../../mailbox/monitor.ts";
import { disposedAfterEach } from "../fixtures/disposed.ts";

const engines = disposedAfterEach<MonitorEngine>();

function contract(resultPattern: string, failurePattern: string | null = null, completion: "match" | "exit" = "match"): MonitorContract {
  return { resultPattern, failurePattern, completion };
}

interface Run {
  outcome: MonitorOutcome;
  /** Milliseconds from spawn to the decision, or null when the contract never decided. */
  decidedAfter: number | null;
  decisions: number;
  pauses: boolean[];
  maxPending: number;
}

/**
 * A small stand-in for the job actor: runs `command` in its own process group, feeds the engine, stops the group
 * when the contract decides or the timeout passes, and honours backpressure by pausing the pipes.
 */
async function monitor(
  command: string,
  terms: MonitorContract,
  options: { timeoutMs?: number; engine?: EngineOptions; stopAfterMs?: number } = {},
): Promise<Run> {
  const child = spawn("sh", ["-c", command], { detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const started = performance.now();
  let cause: ProcessEnd["cause"] | null = null;
  let decidedAfter: number | null = null;
  let decisions = 0;
  let maxPending = 0;
  const pauses: boolean[] = [];
  const stopGroup = (): void => {
    try {
      process.kill(-(child.pid as number), "SIGKILL");
    } catch {
      // Already gone.
    }
  };
  const engine = createMonitorEngine(
    terms,
    {
      onDecided() {
        decisions++;
        decidedAfter = performance.now() - started;
        cause ??= "contract";
        stopGroup();
      },
      onBackpressure(paused) {
        pauses.push(paused);
        for (const stream of [child.stdout, child.stderr]) {
          if (paused) stream.pause();
          else stream.resume();
        }
      },
    },
    options.engine,
  );
  engines.push(engine);
  for (const source of ["stdout", "stderr"] as const) {
    child[source].on("data", (chunk: Buffer) => {
      engine.push(source, chunk);
      maxPending = Math.max(maxPending, engine.pending().lines);
    });
    child[source].on("end", () => engine.end(source));
  }
  const timers = [
    setTimeout(() => {
      cause ??= "timeout";
      stopGroup();
    }, options.timeoutMs ?? 20_000),
  ];
  if (options.stopAfterMs !== undefined) {
    timers.push(
      setTimeout(() => {
        cause ??= "stopped";
        stopGroup();
      }, options.stopAfterMs),
    );
  }
  const [exitCode, signal] = await new Promise<[number | null, string | null]>((resolve) =>
    child.on("close", (code, sig) => resolve([code, sig])),
  );
  for (const timer of timers) clearTimeout(timer);
  const outcome = await engine.finish({ cause: cause ?? "exit", exitCode, signal });
  return { outcome, decidedAfter, decisions, pauses, maxPending };
}

/** An engine fed directly, for rules that need exact chunk boundaries. */
function direct(terms: MonitorContract, options?: EngineOptions) {
  const events = { decided: 0, decidedAt: Number.NaN, pauses: [] as boolean[] };
  const engine = createMonitorEngine(
    terms,
    {
      onDecided: () => {
        events.decided++;
        events.decidedAt = performance.now();
      },
      onBackpressure: (paused) => void events.pauses.push(paused),
    },
    options,
  );
  engines.push(engine);
  const push = (source: LineSource, text: string | Uint8Array) =>
    engine.push(source, typeof text === "string" ? Buffer.from(text) : text);
  return { engine, events, push };
}

const exited = (exitCode: number): ProcessEnd => ({ cause: "exit", exitCode, signal: null });

async function waitFor(condition: () => boolean, deadlineMs: number): Promise<boolean> {
  const until = performance.now() + deadlineMs;
  while (performance.now() < until) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return condition();
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the spec's cases", () => {
  it("case 1: a noisy build with a JSON sentinel succeeds with the parsed result", async () => {
    const run = await monitor(
      `python3 -c "[print(f\\"compiling module_{i}.o\\") for i in range(200)]; print(\\"__PI_MONITOR_RESULT__ {\\\\\\"modules\\\\\\": 200, \\\\\\"status\\\\\\": \\\\\\"success\\\\\\"}\\")"`,
      contract("__PI_MONITOR_RESULT__ (?<json>\\{.*\\})", null, "exit"),
    );
    expect(run.outcome).toMatchObject({
      status: "success",
      completion: "exit",
      stoppedBy: null,
      exitCode: 0,
      hasResult: true,
      result: { modules: 200, status: "success" },
      resultParseError: null,
    });
  });

  it("case 2: a stderr failure match returns its capture and a source-labelled tail", async () => {
    const run = await monitor(
      `python3 -c "import sys; print(\\"configuring...\\"); print(\\"FATAL: migration failed: column exists\\", file=sys.stderr); sys.exit(1)"`,
      contract("MIGRATION_OK", "FATAL: (?<error>.*)"),
    );
    expect(run.outcome).toMatchObject({
      status: "failure",
      matchedSource: "stderr",
      captures: { error: "migration failed: column exists" },
    });
    expect(run.outcome.output).toEqual(
      expect.arrayContaining([
        { source: "stderr", text: "FATAL: migration failed: column exists", count: 1, clipped: false },
        { source: "stdout", text: "configuring...", count: 1, clipped: false },
      ]),
    );
  });

  it("case 3: exit 0 without the sentinel is result_missing with the output", async () => {
    const run = await monitor("echo 'Task finished without contract'", contract("EXPECTED_SENTINEL_XYZ"));
    expect(run.outcome).toMatchObject({ status: "result_missing", exitCode: 0, matched: null, stoppedBy: null });
    expect(run.outcome.output).toEqual([{ source: "stdout", text: "Task finished without contract", count: 1, clipped: false }]);
    expect(run.decisions).toBe(0);
  });

  it("case 4: timeout is timeout with reason timeout", async () => {
    const run = await monitor("sleep 5", contract("NEVER_MATCH"), { timeoutMs: 300 });
    expect(run.outcome).toMatchObject({ status: "timeout", reason: "timeout", signal: "SIGKILL" });
  });
});

describe("match mode", () => {
  it("scans stderr as well as stdout", async () => {
    const run = await monitor("echo noise; echo READY >&2; exec sleep 10", contract("^READY$"));
    expect(run.outcome).toMatchObject({ status: "success", matchedSource: "stderr", stoppedBy: "match" });
  });

  it("a failure match beats a success match on the same line", async () => {
    const run = await monitor("echo 'DONE FATAL'; sleep 10", contract("DONE", "FATAL"));
    expect(run.outcome).toMatchObject({ status: "failure", matched: "FATAL", stoppedBy: "match" });
  });

  it("the first match stops the group, and nothing later revises it", async () => {
    const run = await monitor("echo READY; sleep 1; echo FATAL; exit 3", contract("^READY$", "FATAL"));
    expect(run.outcome).toMatchObject({ status: "success", stoppedBy: "match", signal: "SIGKILL" });
    // The group died at the match: the later lines were never written.
    expect(run.outcome.output.map((line) => line.text)).toEqual(["READY"]);
    expect(run.decisions).toBe(1);

    const fed = direct(contract("^READY$", "FATAL"));
    fed.push("stdout", "READY\nFATAL\n");
    expect(fed.engine.decided).toBe(true);
    expect((await fed.engine.finish(exited(3))).status).toBe("success");
    expect(fed.events.decided).toBe(1);
  });

  it("a sentinel without a trailing newline matches once its line has been idle for 150 ms", async () => {
    const run = await monitor("printf 'READY port=3000'; exec sleep 10", contract("^READY port=(?<port>\\d+)$"));
    expect(run.outcome).toMatchObject({ status: "success", captures: { port: "3000" }, stoppedBy: "match" });
    expect(run.decidedAfter as number).toBeLessThan(5_000);
  });

  it("an unterminated line is evaluated only after 150 ms of silence on its source", async () => {
    const fed = direct(contract("^READY$"));
    const pushedAt = performance.now();
    fed.push("stdout", "READY");
    expect(fed.engine.decided).toBe(false);
    expect(await waitFor(() => fed.engine.decided, 3_000)).toBe(true);
    expect(fed.events.decidedAt - pushedAt).toBeGreaterThanOrEqual(145);
  });

  it("the idle check does not commit the partial line", async () => {
    const fed = direct(contract("^READY$"));
    fed.push("stdout", "REA");
    // Let the window close on "REA": the probe finds nothing and must leave the line whole for the bytes to come.
    await sleep(400);
    expect(fed.engine.decided).toBe(false);
    fed.push("stdout", "DY");
    expect(await waitFor(() => fed.engine.decided, 3_000)).toBe(true);
    const outcome = await fed.engine.finish({ cause: "contract", exitCode: null, signal: "SIGTERM" });
    expect(outcome).toMatchObject({ status: "success", matched: "READY" });
  });

  it("a writer pausing mid-line still matches once the line is complete", async () => {
    const run = await monitor("printf 'REA'; sleep 0.5; printf 'DY\\n'; exec sleep 10", contract("^READY$"));
    expect(run.outcome).toMatchObject({ status: "success", matched: "READY" });
    expect(run.decidedAfter as number).toBeGreaterThanOrEqual(450);
  });

  it("keeps re-arming the window while bytes keep coming on the same source", async () => {
    const fed = direct(contract("^READY"));
    fed.push("stdout", "READY");
    let lastPush = performance.now();
    for (let i = 0; i < 8; i++) {
      await sleep(20);
      fed.push("stdout", ".");
      lastPush = performance.now();
    }
    expect(await waitFor(() => fed.engine.decided, 3_000)).toBe(true);
    expect(fed.events.decidedAt - lastPush).toBeGreaterThanOrEqual(145);
  });

  it("activity on the other source does not reset a source's idle window", async () => {
    const run = await monitor(
      "printf 'READY'; i=0; while [ $i -lt 400 ]; do echo tick >&2; sleep 0.05; i=$((i+1)); done; sleep 10",
      contract("^READY$"),
    );
    expect(run.outcome).toMatchObject({ status: "success", matchedSource: "stdout" });
    // stderr keeps ticking for 20 s or more; the stdout window closes long before that, even on a loaded machine.
    expect(run.decidedAfter as number).toBeLessThan(10_000);
  });

  it("keeps the regex status when the JSON capture is invalid", async () => {
    const run = await monitor("echo 'R {oops'; sleep 10", contract("^R (?<json>.*)$"));
    expect(run.outcome).toMatchObject({ status: "success", hasResult: false, stoppedBy: "match" });
    expect(run.outcome.resultParseError).toEqual(expect.any(String));
  });
});

describe("exit mode", () => {
  it("never evaluates an idle partial line, but a last line without newline counts at EOF", async () => {
    const fed = direct(contract("^DONE$", "^FATAL$", "exit"));
    fed.push("stdout", "FATAL");
    await sleep(500);
    expect(fed.engine.decided).toBe(false);

    const run = await monitor("printf DONE; sleep 0.4", contract("^DONE$", null, "exit"));
    expect(run.outcome).toMatchObject({ status: "success", matched: "DONE", exitCode: 0 });
    expect(run.decisions).toBe(0);
  });

  it("success needs exit 0: a candidate followed by a non-zero exit is failure", async () => {
    const run = await monitor("echo DONE; exit 4", contract("^DONE$", null, "exit"));
    expect(run.outcome).toMatchObject({ status: "failure", exitCode: 4, reason: null });
  });

  it("the first candidate is immutable, including its JSON parse error", async () => {
    const run = await monitor(`echo 'DONE {bad'; echo 'DONE {"ok":true}'`, contract("^DONE (?<json>.*)$", null, "exit"));
    expect(run.outcome).toMatchObject({ status: "failure", reason: "invalid_json_result", matched: "DONE {bad", hasResult: false });
  });

  it("a failure in the same evaluated batch beats the candidate", async () => {
    const run = await monitor("printf 'DONE\\nFATAL\\n'", contract("^DONE$", "^FATAL$", "exit"));
    expect(run.outcome).toMatchObject({ status: "failure", matched: "FATAL" });
  });

  it("later batches keep being checked for failures, and a failure stops the group at once", async () => {
    const run = await monitor("echo DONE; sleep 0.3; echo FATAL; sleep 10", contract("^DONE$", "^FATAL$", "exit"));
    expect(run.outcome).toMatchObject({ status: "failure", matched: "FATAL", stoppedBy: "match" });
    expect(run.decidedAfter as number).toBeLessThan(5_000);
    expect(run.decisions).toBe(1);
  });

  it("timeout overrides the candidate and keeps the unterminated tail", async () => {
    // The deadline leaves the command ample time to print first, however busy the machine.
    const run = await monitor("echo DONE; printf 'still going'; sleep 10", contract("^DONE$", null, "exit"), { timeoutMs: 3_000 });
    expect(run.outcome).toMatchObject({ status: "timeout", reason: "timeout", matched: null });
    expect(run.outcome.output.map((line) => line.text)).toEqual(["DONE", "still going"]);
  });

  it("a manual stop is stopped and keeps the unterminated tail", async () => {
    const run = await monitor("printf 'half a line'; sleep 10", contract("^DONE$", null, "exit"), { stopAfterMs: 3_000 });
    expect(run.outcome).toMatchObject({ status: "stopped", reason: null });
    expect(run.outcome.output).toEqual([{ source: "stdout", text: "half a line", count: 1, clipped: false }]);
  });
});

describe("JSON results from a real process (exit mode)", () => {
  const json = (payload: string) => monitor(`printf 'RESULT %s\\n' '${payload}'`, contract("^RESULT (?<json>.*)$", null, "exit"));

  for (const [payload, value] of [["false", false], ["null", null], ["0", 0]] as const) {
    it(`${payload} is a valid result`, async () => {
      const { outcome } = await json(payload);
      expect(outcome).toMatchObject({ status: "success", hasResult: true, resultParseError: null });
      expect(outcome.result).toBe(value);
    });
  }

  for (const [label, payload] of [["empty", ""], ["invalid", "{x:1}"]] as const) {
    it(`${label} JSON is failure with invalid_json_result`, async () => {
      const { outcome } = await json(payload);
      expect(outcome).toMatchObject({ status: "failure", reason: "invalid_json_result", hasResult: false });
      expect(outcome.resultParseError).toEqual(expect.any(String));
    });
  }

  it("clipped JSON (over 32 KiB) is failure with invalid_json_result and says captures were truncated", async () => {
    const { outcome } = await monitor(
      `printf 'RESULT ['; i=0; while [ $i -lt 9000 ]; do printf '1234,'; i=$((i+1)); done; printf '0]\\n'`,
      contract("^RESULT (?<json>.*)$", null, "exit"),
    );
    expect(outcome).toMatchObject({ status: "failure", reason: "invalid_json_result", capturesTruncated: true, hasResult: false });
    expect(outcome.resultParseError).toMatch(/clipped/);
  });
});

describe("bounds", () => {
  it("a 100 KiB line without newline fails with matcher_line_limit", async () => {
    const run = await monitor("head -c 102400 /dev/zero | tr '\\0' a; sleep 10", contract("^DONE$"));
    expect(run.outcome).toMatchObject({ status: "failure", reason: "matcher_line_limit", matched: null });
    expect(run.decidedAfter as number).toBeLessThan(5_000);
  });

  it("never matches a fragment of an over-long line", async () => {
    const fed = direct(contract("READY", null, "exit"));
    fed.push("stdout", `${"x".repeat(70 * 1024)}READY\n`);
    expect(fed.engine.decided).toBe(true);
    const outcome = await fed.engine.finish({ cause: "contract", exitCode: null, signal: "SIGTERM" });
    expect(outcome).toMatchObject({ status: "failure", reason: "matcher_line_limit", matched: null });
    expect(outcome.output[0]?.clipped).toBe(true);
  });

  it("a line of exactly 64 KiB is still matched", async () => {
    const fed = direct(contract("READY$"));
    fed.push("stdout", `${"x".repeat(64 * 1024 - 5)}READY\n`);
    const outcome = await fed.engine.finish({ cause: "contract", exitCode: null, signal: "SIGTERM" });
    expect(outcome).toMatchObject({ status: "success", matched: "READY" });
  });

  it("matches through invalid UTF-8 and reports it as replacement characters", async () => {
    const run = await monitor("printf '\\377\\376READY \\303(\\n'; exec sleep 10", contract("READY (?<rest>.*)$"));
    expect(run.outcome).toMatchObject({ status: "success", matched: "READY \ufffd(", captures: { rest: "\ufffd(" } });
    expect(run.outcome.output[0]?.text).toBe("\ufffd\ufffdREADY \ufffd(");
  });

  it("clips the matched text at 4 KiB and says so", async () => {
    const fed = direct(contract("^x+$"));
    fed.push("stdout", `${"x".repeat(5000)}\n`);
    const outcome = await fed.engine.finish({ cause: "contract", exitCode: null, signal: "SIGTERM" });
    expect(outcome).toMatchObject({ status: "success", matchedTruncated: true });
    expect(outcome.matched).toHaveLength(4096);
  });
});

describe("flooding output: nothing is skipped", () => {
  const flood = "seq 1 1000000 | awk '$1 == 999999 { print \"FATAL: at \" $1; next } { print \"noise \" $1 }'";

  it("a failure at line 999,999 of 1,000,000 is found (inline matching)", async () => {
    const run = await monitor(flood, contract("^DONE$", "^FATAL: at (?<line>\\d+)$"));
    expect(run.outcome).toMatchObject({ status: "failure", captures: { line: "999999" } });
    expect(run.maxPending).toBe(0);
  });

  it("a failure at line 999,999 of 1,000,000 is found through the sandbox, with the pipes paused and resumed", async () => {
    // The backreference sends both patterns to the sandbox; the failure pattern has no literal prefix to filter on.
    const run = await monitor(flood, contract("^(\\w+)=\\1$", "^[F]ATAL: at (?<line>\\d+)$"));
    expect(run.outcome).toMatchObject({ status: "failure", captures: { line: "999999" } });
    expect(run.pauses).toContain(true);
    expect(run.pauses.filter((paused) => paused)).toHaveLength(run.pauses.filter((paused) => !paused).length);
    expect(run.maxPending).toBeLessThanOrEqual(16_384);
  });

  it("natural exit waits for pending sandbox evaluation before deciding", async () => {
    // seq exits with its last chunks still in the pipe, and Node resumes paused pipes of an exited child: the burst
    // waits as raw bytes until the queue has room.
    const run = await monitor("seq 1 200000; echo abc=abc", contract("^(\\w+)=\\1$", null, "exit"));
    expect(run.outcome).toMatchObject({ status: "success", matched: "abc=abc", exitCode: 0 });
    expect(run.pauses).toContain(true);
    expect(run.maxPending).toBeLessThanOrEqual(16_384);
  });

  it("a single chunk of 40,000 short lines waits as bytes instead of overflowing the line bound", async () => {
    const fed = direct(contract("^(\\w)=\\1$", null, "exit"));
    fed.push("stdout", `${Array.from({ length: 40_000 }, (_, i) => String(i % 10)).join("\n")}\nz=z\n`);
    expect(fed.engine.decided).toBe(false);
    expect(fed.engine.pending().lines).toBeLessThanOrEqual(ENGINE_LIMITS.pauseLines + 8 * 1024);
    expect(fed.events.pauses).toEqual([true]);
    const outcome = await fed.engine.finish(exited(0));
    expect(outcome).toMatchObject({ status: "success", matched: "z=z" });
  });

  it("going over the hard queue bound fails with matcher_queue_limit", async () => {
    const fed = direct(contract("^(\\w+)=\\1$"), { limits: { maxLines: 50, pauseLines: 10_000 } });
    fed.push("stdout", Array.from({ length: 200 }, (_, i) => `line ${i}\n`).join(""));
    expect(fed.engine.decided).toBe(true);
    expect(fed.events.decided).toBe(1);
    const outcome = await fed.engine.finish({ cause: "contract", exitCode: null, signal: "SIGTERM" });
    expect(outcome).toMatchObject({ status: "failure", reason: "matcher_queue_limit" });
  });

  it("pauses at the soft watermark and resumes as evaluation catches up", async () => {
    const fed = direct(contract("^(\\w+)=\\1$"), { limits: { pauseLines: 100, resumeLines: 20 } });
    fed.push("stdout", Array.from({ length: 150 }, (_, i) => `line ${i}\n`).join(""));
    expect(fed.events.pauses).toEqual([true]);
    expect(fed.engine.pending().lines).toBe(150);
    expect(await waitFor(() => fed.events.pauses.length === 2, 10_000)).toBe(true);
    expect(fed.events.pauses).toEqual([true, false]);
    expect(await waitFor(() => fed.engine.pending().lines === 0, 10_000)).toBe(true);
  });

  it("identical adjacent lines waiting for the sandbox are evaluated once, with the same verdict", async () => {
    const fed = direct(contract("^(\\w+)=\\1$", "^(E)\\1$"), { limits: { maxLines: 50, pauseLines: 10_000 } });
    fed.push("stdout", `first\n${"\n".repeat(5_000)}EE\n`);
    expect(fed.engine.decided).toBe(false);
    expect(await waitFor(() => fed.engine.decided, 10_000)).toBe(true);
    const outcome = await fed.engine.finish({ cause: "contract", exitCode: null, signal: "SIGTERM" });
    expect(outcome).toMatchObject({ status: "failure", matched: "EE" });
    expect(outcome.output.find((line) => line.text === "")?.count).toBe(5_000);
  });
});

describe("the regex sandbox inside the engine", () => {
  it("matches a backreference pattern and reports its groups", async () => {
    const run = await monitor("echo noise; echo 'abc=abc'; exec sleep 10", contract("^(?<word>\\w+)=\\k<word>$"));
    expect(run.outcome).toMatchObject({ status: "success", matched: "abc=abc", captures: { word: "abc" }, stoppedBy: "match" });
  });

  it("an idle partial line goes through the sandbox too", async () => {
    const run = await monitor("printf 'ab=ab'; exec sleep 10", contract("^(\\w+)=\\1$"));
    expect(run.outcome).toMatchObject({ status: "success", matched: "ab=ab" });
  });

  it("a pattern stuck in backtracking fails the run with matcher_error while the actor's timers keep firing", async () => {
    const fed = direct(contract("^(a+)+\\1b$"), { sandbox: { batchDeadlineMs: 300 } });
    fed.push("stdout", "warm\n");
    await waitFor(() => fed.engine.pending().lines === 0, 10_000);
    let ticks = 0;
    const ticker = setInterval(() => void ticks++, 20);
    const started = performance.now();
    fed.push("stdout", `${"a".repeat(40)}\n`);
    try {
      // The thread is free while the sandbox grinds (run here, this pattern would not return for hours).
      expect(await waitFor(() => ticks >= 3, 5_000)).toBe(true);
      expect(await waitFor(() => fed.engine.decided, 10_000)).toBe(true);
    } finally {
      clearInterval(ticker);
    }
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(fed.engine.detail).toMatch(/longer than 300 ms/);
    const outcome = await fed.engine.finish({ cause: "contract", exitCode: null, signal: "SIGTERM" });
    expect(outcome).toMatchObject({ status: "failure", reason: "matcher_error" });
  });

  it("a pattern that does not compile fails the run instead of the actor", async () => {
    const fed = direct(contract("(unclosed"));
    await sleep(0);
    expect(fed.engine.decided).toBe(true);
    expect(fed.events.decided).toBe(1);
    expect(fed.engine.detail).toMatch(/result_pattern/);
    expect(await fed.engine.finish(exited(0))).toMatchObject({ status: "failure", reason: "matcher_error" });
  });
});

describe("lines no pattern can match are not framed, with the same outcome", () => {
  const bytesOf = (text: string): Buffer => Buffer.from(text, "utf8");
  const numbers = (from: number, count: number): string =>
    Array.from({ length: count }, (_, i) => `${from + i}\n`).join("");

  /** Cuts each piece into pieces under 1 KiB, which are always framed line by line: the reference. */
  function small(pieces: [LineSource, Uint8Array][]): [LineSource, Uint8Array][] {
    const out: [LineSource, Uint8Array][] = [];
    for (const [source, bytes] of pieces) {
      for (let at = 0; at < bytes.length; at += 999) out.push([source, bytes.subarray(at, at + 999)]);
    }
    return out;
  }

  async function outcomeOf(terms: MonitorContract, pieces: [LineSource, Uint8Array][], end: ProcessEnd): Promise<MonitorOutcome> {
    const fed = direct(terms);
    for (const [source, bytes] of pieces) fed.engine.push(source, bytes);
    return fed.engine.finish(end);
  }

  /** The outcome of `pieces`, checked against the reference. */
  async function sameAsFramingAll(terms: MonitorContract, pieces: [LineSource, Uint8Array][], end = exited(0)) {
    const outcome = await outcomeOf(terms, pieces, end);
    expect(outcome).toEqual(await outcomeOf(terms, small(pieces), end));
    return outcome;
  }

  const never = contract("NEVER_MATCHES_THIS", null, "exit");

  it("a flood that never matches keeps the same tail and truncation", async () => {
    const pieces: [LineSource, Uint8Array][] = [];
    const flood = bytesOf(numbers(1, 200_000));
    for (let at = 0; at < flood.length; at += 4096) pieces.push(["stdout", flood.subarray(at, at + 4096)]);
    expect(pieces.filter(([, bytes]) => quietLines(bytes, [], ENGINE_LIMITS.maxLineBytes) !== null).length).toBeGreaterThan(100);
    const outcome = await sameAsFramingAll(never, pieces);
    expect(outcome).toMatchObject({ status: "result_missing", outputTruncated: true });
    expect(outcome.output.map((line) => line.text)).toEqual(Array.from({ length: 100 }, (_, i) => String(199_901 + i)));
  });

  it("a match in the middle of a large chunk is found, in either mode", async () => {
    const chunk = bytesOf(`${numbers(0, 5000)}DONE {"n": 1}\n${numbers(5000, 5000)}`);
    const exitMode = await sameAsFramingAll(contract("^DONE (?<json>\\{.*\\})$", "FATAL", "exit"), [["stdout", chunk]]);
    expect(exitMode).toMatchObject({ status: "success", result: { n: 1 } });
    const matchMode = await sameAsFramingAll(contract("DONE"), [["stdout", chunk]], { cause: "contract", exitCode: null, signal: "SIGTERM" });
    expect(matchMode).toMatchObject({ status: "success", matched: "DONE", stoppedBy: "match" });
  });

  it("a line that ends like the run after it is matched", async () => {
    const chunk = bytesOf(`${numbers(0, 3000)}xab\n${"ab\n".repeat(50)}${numbers(5000, 100)}`);
    expect(await sameAsFramingAll(contract("xab", null, "exit"), [["stdout", chunk]])).toMatchObject({ status: "success" });
  });

  it("a line an earlier chunk began is completed by the first line of a large chunk", async () => {
    const split = await sameAsFramingAll(contract("^DONE$", null, "exit"), [
      ["stdout", bytesOf("DO")],
      ["stdout", bytesOf(`NE\n${numbers(0, 5000)}`)],
    ]);
    expect(split).toMatchObject({ status: "success", matched: "DONE" });
    const crlf = await sameAsFramingAll(never, [
      ["stdout", bytesOf("progress\r")],
      ["stdout", bytesOf(`\n${numbers(0, 5000)}`)],
    ]);
    expect(crlf.output.at(-1)?.text).toBe("4999");
  });

  it("exit mode with a candidate still finds a later failure, and a later over-long line", async () => {
    const terms = contract("^DONE$", "FATAL", "exit");
    const candidate = bytesOf(`${numbers(0, 2000)}DONE\n${numbers(0, 2000)}`);
    const failure = await sameAsFramingAll(terms, [
      ["stdout", candidate],
      ["stdout", bytesOf(`${numbers(0, 3000)}FATAL: late\n${numbers(0, 3000)}`)],
    ]);
    expect(failure).toMatchObject({ status: "failure", matched: "FATAL" });
    const limit = await sameAsFramingAll(terms, [
      ["stdout", candidate],
      ["stdout", bytesOf(`${numbers(0, 3000)}${"x".repeat(64 * 1024 + 1)}\n${numbers(0, 3000)}`)],
    ]);
    expect(limit).toMatchObject({ status: "failure", reason: "matcher_line_limit" });
    const fine = await sameAsFramingAll(terms, [
      ["stdout", candidate],
      ["stdout", bytesOf(`${numbers(0, 3000)}${"x".repeat(64 * 1024)}\n${numbers(0, 3000)}`)],
    ]);
    expect(fine).toMatchObject({ status: "success", matched: "DONE" });
  });

  it("an over-long line among lines that cannot match fails the contract", async () => {
    for (const extra of [1, 2, 1000]) {
      const chunk = bytesOf(`${numbers(0, 3000)}${"x".repeat(64 * 1024 + extra)}\n${numbers(0, 3000)}`);
      const outcome = await sameAsFramingAll(never, [["stdout", chunk]]);
      expect(outcome).toMatchObject({ status: "failure", reason: "matcher_line_limit" });
    }
    const exact = bytesOf(`${numbers(0, 3000)}${"x".repeat(64 * 1024)}\n${numbers(0, 3000)}`);
    expect(await sameAsFramingAll(never, [["stdout", exact]])).toMatchObject({ status: "result_missing" });
  });

  it("a run the tail keeps is counted whole when the same line came before the skipped lines", async () => {
    // The first line and the kept run are the same text: pushed next to each other they would merge into one
    // entry with the wrong count, unless the kept runs are enough for that entry to be evicted anyway.
    const chunk = bytesOf(`same\n${numbers(0, 300)}${"same\n".repeat(50)}${numbers(1000, 99)}`);
    const outcome = await sameAsFramingAll(never, [["stdout", chunk]]);
    expect(outcome.output[0]).toEqual({ source: "stdout", text: "same", count: 50, clipped: false });
    expect(outcome.output).toHaveLength(100);
  });

  it("repeated, multi-byte, invalid UTF-8 and CR lines keep their counts and order", async () => {
    const tails = [
      Buffer.from("\xff\n\xfe\n".repeat(200), "latin1"),
      bytesOf("é€😀\n".repeat(30) + "€\n".repeat(120)),
      bytesOf("a\r\nb\rb\n".repeat(150)),
      bytesOf("same\n".repeat(5000)),
    ];
    for (const tail of tails) {
      const chunk = Buffer.concat([bytesOf(numbers(0, 3000)), tail, bytesOf(numbers(0, 50))]);
      await sameAsFramingAll(never, [["stdout", chunk]]);
    }
  });

  it("a pattern whose literal is half of a four-byte character still matches it", async () => {
    // Without the `u` flag a regex sees UTF-16 code units: "\ud83d" is the first half of 😀, not bytes of its own.
    const chunk = bytesOf(`${numbers(0, 3000)}smile 😀\n${numbers(0, 3000)}`);
    const outcome = await sameAsFramingAll(contract("\ud83d", null, "exit"), [["stdout", chunk]]);
    expect(outcome).toMatchObject({ status: "success", matched: "\ud83d" });
  });

  it("both sources keep their own partial lines and the tail their order", async () => {
    const pieces: [LineSource, Uint8Array][] = [
      ["stderr", bytesOf("warning: half a li")],
      ["stdout", bytesOf(`${numbers(0, 3000)}half`)],
      ["stderr", bytesOf(`ne\n${numbers(0, 2000)}tail`)],
      ["stdout", bytesOf(` done\n${numbers(5000, 150)}`)],
    ];
    const outcome = await sameAsFramingAll(contract("NEVER", "FATAL", "exit"), pieces);
    expect(outcome.output.at(-1)).toEqual({ source: "stderr", text: "tail", count: 1, clipped: false });
  });

  it("after a decision, later output only feeds the tail, skipped the same way", async () => {
    const pieces: [LineSource, Uint8Array][] = [
      ["stdout", bytesOf("READY\n")],
      ["stdout", bytesOf(`${numbers(0, 3000)}${"x".repeat(70 * 1024)}\n${numbers(0, 3000)}`)],
    ];
    const outcome = await sameAsFramingAll(contract("READY"), pieces, { cause: "contract", exitCode: null, signal: "SIGTERM" });
    expect(outcome).toMatchObject({ status: "success", matched: "READY" });
    expect(outcome.output.at(-1)?.text).toBe("2999");
  });

  it("an idle sentinel at the end of a large chunk is still matched (match mode)", async () => {
    const fed = direct(contract("^READY$"), { idleMs: 50 });
    fed.push("stdout", `${numbers(0, 5000)}READY`);
    expect(fed.engine.decided).toBe(false);
    expect(await waitFor(() => fed.engine.decided, 5_000)).toBe(true);
    expect(await fed.engine.finish({ cause: "contract", exitCode: null, signal: "SIGTERM" })).toMatchObject({
      status: "success",
      matched: "READY",
    });
  });

  it("random output in random chunks gives the same outcome as framing every line", async () => {
    let seed = 7;
    const next = (): number => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      return seed / 4_294_967_296;
    };
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
    const kinds: (() => Buffer)[] = [
      () => bytesOf(`${Math.floor(next() * 1e6)}\n`),
      () => bytesOf("same\n"),
      () => bytesOf("\n"),
      () => bytesOf(`${pick(["DONE", "FATAL x", "é€", "😀"])}\n`),
      () => Buffer.from([pick([0xff, 0xfe]), 0x0a]),
      () => bytesOf(pick(["a\r\n", "progress\r"])),
      () => bytesOf(`${"x".repeat(64 * 1024 + pick([0, 1]))}\n`),
      () => bytesOf(`${pick(["ab", "xab", "b"])}\n`.repeat(1 + Math.floor(next() * 300))),
    ];
    const terms = [never, contract("DONE", "FATAL", "exit"), contract("DONE", "FATAL"), contract("é€", null, "exit"), contract("xab", null, "exit")];
    for (let trial = 0; trial < 40; trial++) {
      // Mostly numbers, and a few other kinds of line, different in each trial.
      const weights = kinds.map((_, i) => (i === 0 ? 1 : next() < 0.5 ? next() * (i === 6 ? 0.0005 : i === 7 ? 0.005 : 0.05) : 0));
      const line = (): Buffer => {
        let roll = next() * weights.reduce((sum, weight) => sum + weight, 0);
        for (let i = 0; i < kinds.length; i++) {
          roll -= weights[i] as number;
          if (roll < 0) return (kinds[i] as () => Buffer)();
        }
        return (kinds[0] as () => Buffer)();
      };
      const pieces: [LineSource, Uint8Array][] = [];
      for (let count = Math.floor(next() * 40); count > 0; count--) {
        const lines = Array.from({ length: Math.floor(next() * 3000) }, line);
        pieces.push([next() < 0.8 ? "stdout" : "stderr", Buffer.concat([...lines, bytesOf(pick(["", "", "partial"]))])]);
      }
      await sameAsFramingAll(pick(terms), pieces, pick([exited(0), exited(1), { cause: "timeout", exitCode: null, signal: "SIGTERM" }]));
    }
  });
});
