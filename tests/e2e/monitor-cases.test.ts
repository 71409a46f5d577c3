/**
 * The monitor spec's worked cases and the adversarial inputs, end to end in real Pi (in process, pi-jobs loaded by
 * Pi's own loader): the scripted model calls `monitor_start`, and each test checks the exact text the model
 * receives back in its next request. The session has no UI host (the SDK binds "print"), so every report comes
 * back as the tool call's own result.
 *
 * The spec's cases predate two of its later rules, which the reports follow: every result names its completion
 * mode, and a run that did not pass ends with one `next=` line (see host/monitor/report.ts). Elapsed times and
 * monitor ids vary and are checked by shape.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSdkSession, type SdkSession } from "./harness/sdk.ts";
import { textOf, toolEnds } from "./harness/transcript.ts";
import { answer, callTools, monitorCall } from "./harness/turns.ts";

let sdk: SdkSession;

beforeAll(async () => {
  sdk = await startSdkSession();
});

afterAll(async () => {
  await sdk?.dispose();
});

interface Seen {
  /** The tool result text as the model received it in its next request. */
  text: string;
  lines: string[];
  structured: Record<string, unknown>;
  /** Wall time of the whole prompt, in ms. */
  tookMs: number;
}

/** One prompt: the model calls monitor_start with `args`, then reads the result and stops. */
async function monitorOnce(args: Record<string, unknown>): Promise<Seen> {
  const mark = sdk.events.length;
  const requestMark = sdk.requests.length;
  sdk.script(callTools(monitorCall(args)), answer("noted"));
  const started = performance.now();
  await sdk.prompt("run the monitor");
  const tookMs = performance.now() - started;
  const next = sdk.requests[requestMark + 1];
  const result = next?.messages.filter((message) => (message as { role: string }).role === "toolResult").at(-1);
  if (result === undefined) throw new Error("the model never received a tool result");
  const end = toolEnds(sdk.since(mark)).at(-1);
  const text = textOf(result as { content?: unknown });
  return { text, lines: text.split("\n"), structured: (end?.result as { structuredContent: Record<string, unknown> }).structuredContent, tookMs };
}

/** Replaces the values that vary from run to run, so a whole report can be compared. */
function shape(lines: string[]): string[] {
  return lines.map((line) =>
    line.replace(/^monitor_id=monitor_\d+$/, "monitor_id=<id>").replace(/^elapsed=\d+(\.\d)?(ms|s)$/, "elapsed=<t>"),
  );
}

describe("the spec's five cases", () => {
  it("case 1: a high-noise build with a JSON sentinel: only the parsed result reaches the model", async () => {
    const seen = await monitorOnce({
      command:
        'python3 -c "[print(f\\"compiling module_{i}.o\\") for i in range(200)]; print(\\"__PI_MONITOR_RESULT__ {\\\\\\"modules\\\\\\": 200, \\\\\\"status\\\\\\": \\\\\\"success\\\\\\"}\\")"',
      description: "build project",
      result_pattern: "__PI_MONITOR_RESULT__ (?<json>\\{.*\\})",
      completion: "exit",
    });
    expect(shape(seen.lines)).toEqual([
      "Monitor: build project",
      "monitor_id=<id>",
      "status=success",
      "elapsed=<t>",
      "completion=exit",
      'result={"modules":200,"status":"success"}',
    ]);
    expect(seen.text).not.toContain("compiling module");
    expect(seen.structured).toMatchObject({
      description: "build project",
      status: "success",
      result: { status: "success", result: { modules: 200, status: "success" }, exitCode: 0 },
    });
  });

  it("case 2: a stderr failure pattern returns its capture and a source-labelled tail", async () => {
    const seen = await monitorOnce({
      command:
        'python3 -c "import sys; print(\\"configuring...\\"); print(\\"FATAL: migration failed: column exists\\", file=sys.stderr); sys.exit(1)"',
      description: "database migration",
      result_pattern: "MIGRATION_OK",
      failure_pattern: "FATAL: (?<error>.*)",
    });
    const lines = shape(seen.lines);
    expect(lines.slice(0, 6)).toEqual([
      "Monitor: database migration",
      "monitor_id=<id>",
      "status=failure",
      "elapsed=<t>",
      "completion=match",
      "stopped_by=match",
    ]);
    expect(lines).toContain("capture.error=migration failed: column exists");
    // Python flushes its piped stdout only at exit, which races with the stop the failure match causes, and the two
    // pipes are read independently; the stderr line that decided is always there, labelled with its source.
    const output = JSON.parse((lines.find((line) => line.startsWith("output=")) ?? "output=[]").slice("output=".length)) as string[];
    expect(output).toContain("[stderr] FATAL: migration failed: column exists");
    expect(output.filter((line) => line !== "[stderr] FATAL: migration failed: column exists")).toEqual(
      output.length === 2 ? ["[stdout] configuring..."] : [],
    );
    expect(lines.at(-1)).toBe("next=fix the error the failure match reports, then rerun");
    expect(seen.structured).toMatchObject({ status: "failure", result: { matchedSource: "stderr", captures: { error: "migration failed: column exists" } } });
  });

  it("case 3: exit 0 without the sentinel is result_missing, never a false success", async () => {
    const seen = await monitorOnce({
      command: "echo 'Task finished without contract'",
      description: "silent finish probe",
      result_pattern: "EXPECTED_SENTINEL_XYZ",
    });
    expect(shape(seen.lines)).toEqual([
      "Monitor: silent finish probe",
      "monitor_id=<id>",
      "status=result_missing",
      "elapsed=<t>",
      "completion=match",
      "expected=EXPECTED_SENTINEL_XYZ",
      "exit_code=0",
      'output=["[stdout] Task finished without contract"]',
      "next=the command ended without printing result_pattern; fix its final sentinel or the pattern, then rerun",
    ]);
  });

  it("case 4: a timeout kills the command and reports cleanly without hanging the turn", async () => {
    const seen = await monitorOnce({ command: "sleep 60", description: "timeout probe", result_pattern: "NEVER_MATCH", timeout_ms: 800 });
    expect(shape(seen.lines)).toEqual([
      "Monitor: timeout probe",
      "monitor_id=<id>",
      "status=timeout",
      "elapsed=<t>",
      "completion=match",
      "reason=timeout",
      "timeout_ms=800",
      "next=rerun with a larger timeout_ms only if the work was progressing; otherwise look for a hang",
    ]);
    const elapsed = (seen.structured.result as { elapsedMs: number }).elapsedMs;
    expect(elapsed).toBeGreaterThanOrEqual(800);
    // The monitor did not wait for the 60 s command (the bound is for a loaded machine).
    expect(elapsed).toBeLessThan(30_000);
  });

  it("case 5: in a UI session a monitor-only batch is acknowledged and ends the turn", async () => {
    const ui = await startSdkSession({ mode: "rpc" });
    try {
      ui.script(
        callTools(monitorCall({ command: "echo DONE", description: "background verification", result_pattern: "^DONE$" })),
        answer("woken"),
      );
      await ui.prompt("verify in the background");
      const ack = toolEnds(ui.events)[0];
      expect(textOf(ack?.result as { content: unknown })).toBe(
        "Monitor started: background verification\nmonitor_id=monitor_1\nterminal_result=pending",
      );
      expect(ack?.result).toMatchObject({ terminate: true, structuredContent: { monitorId: "monitor_1", status: "running" } });
      // The wake follows (delivery itself is proven in monitor-delivery.test.ts); let it finish before disposing.
      await ui.waitFor((event) => event.type === "message_end" && (event as { message: { role: string } }).message.role === "custom");
      await ui.session.agent.waitForIdle();
    } finally {
      await ui.dispose();
    }
  });
});

describe("report details through real Pi", () => {
  it("compact=true: a valid direct success drops label, id and timing; the structured result keeps them", async () => {
    const seen = await monitorOnce({
      command: `printf 'DONE {"value":"%s"}\\n' "$(head -c 2048 /dev/zero | tr '\\0' a)"`,
      result_pattern: "^DONE (?<json>.*)$",
      completion: "exit",
      compact: true,
    });
    expect(seen.lines[0]).toBe("status=success");
    expect(seen.lines[1]).toBe("exit_code=0");
    expect(seen.lines[2]).toMatch(/^payload_encoding=rle-v1/);
    const encoded = JSON.parse(seen.lines[3]!.slice("payload_rle=".length)) as (string | [string, number])[];
    const decoded = encoded.map((part) => (typeof part === "string" ? part : part[0].repeat(part[1]))).join("");
    expect(decoded).toBe(`result={"value":"${"a".repeat(2048)}"}`);
    expect(seen.structured).toMatchObject({ status: "success", result: { result: { value: "a".repeat(2048) } } });
    expect(typeof seen.structured.monitorId).toBe("string");
  });

  it("without a description the label is derived from the command: shell wrapper dropped, whitespace collapsed", async () => {
    const seen = await monitorOnce({ command: "sh -c 'echo    BUILD_OK\n  && true'", result_pattern: "^BUILD_OK$" });
    expect(seen.lines[0]).toBe("Monitor: echo BUILD_OK && true");
    expect(seen.structured.description).toBe("echo BUILD_OK && true");
  });

  it("a derived label is at most 60 characters", async () => {
    const seen = await monitorOnce({ command: `echo ${"word ".repeat(30)}; echo OK`, result_pattern: "^OK$" });
    const label = seen.lines[0]!.slice("Monitor: ".length);
    expect(Array.from(label).length).toBeLessThanOrEqual(60);
    expect(label.startsWith("echo word word")).toBe(true);
  });
});

describe("adversarial output, end to end", () => {
  it("1,000,000 noise lines with the failure at line 999,999: nothing is skipped", async () => {
    const seen = await monitorOnce({
      command: "seq 1 1000000 | awk '$1 == 999999 { print \"FATAL: at \" $1; next } { print \"noise \" $1 }'",
      description: "flood",
      result_pattern: "^DONE$",
      failure_pattern: "^FATAL: at (?<line>\\d+)$",
    });
    expect(seen.lines).toContain("status=failure");
    expect(seen.lines).toContain("capture.line=999999");
    // The model got a bounded report, not the flood.
    expect(seen.text.length).toBeLessThan(16 * 1024);
  });

  it("a 100 KiB line without a newline fails with matcher_line_limit instead of waiting", async () => {
    const seen = await monitorOnce({
      command: "head -c 102400 /dev/zero | tr '\\0' a; exec sleep 30",
      description: "long line",
      result_pattern: "^DONE$",
      timeout_ms: 20_000,
    });
    expect(seen.lines).toEqual(expect.arrayContaining(["status=failure", "reason=matcher_line_limit"]));
    expect(seen.tookMs).toBeLessThan(15_000);
    // The tail shows that line clipped to the 10 KiB display bound, never the whole 100 KiB.
    expect(seen.text).toContain("[stdout clipped] aaaa");
    expect(seen.text.length).toBeLessThan(12 * 1024);
  });

  it("invalid UTF-8 is matched and reported as replacement characters", async () => {
    const seen = await monitorOnce({
      command: "printf '\\377\\376READY \\303(\\n'; exec sleep 30",
      description: "bad bytes",
      result_pattern: "READY (?<rest>.*)$",
    });
    expect(seen.lines).toEqual(expect.arrayContaining(["status=success", "capture.rest=\ufffd("]));
  });

  it("ANSI and OSC sequences in output reach the model escaped, never raw", async () => {
    const seen = await monitorOnce({
      command: "printf '\\033]0;pwned\\007\\033[31mFATAL\\033[0m: disk \\033]8;;http://x\\033\\\\full\\n'; exit 1",
      description: "escapes",
      result_pattern: "^DONE$",
      failure_pattern: "FATAL.*: (?<why>.*)$",
    });
    expect(seen.lines).toContain("status=failure");
    // No control character of any kind reaches the model. The tail is rendered as a person reads it (the title,
    // the colour and the link's escape codes gone); the capture is the contract's payload, its ESC spelled out.
    expect(seen.text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(seen.text).toContain('output=["[stdout] FATAL: disk full"]');
    expect(seen.text).toContain("capture.why=disk \\x1b]8;;http://x\\x1b\\full");
  });

  it("^(a+)+$ as the failure pattern cannot stall the monitor: timeout_ms 500 fires on time", async () => {
    const seen = await monitorOnce({
      command: `i=0; while [ $i -lt 200 ]; do echo "${"a".repeat(40)}b"; i=$((i+1)); done; exec sleep 30`,
      description: "redos",
      result_pattern: "^DONE$",
      failure_pattern: "^(a+)+$",
      timeout_ms: 500,
    });
    expect(seen.lines).toEqual(expect.arrayContaining(["status=timeout", "reason=timeout", "timeout_ms=500"]));
    // On time: far below the 30 s the command would run, measured by the monitor and by the whole turn.
    expect((seen.structured.result as { elapsedMs: number }).elapsedMs).toBeLessThan(5_000);
    expect(seen.tookMs).toBeLessThan(10_000);
  });

  it("a backtracking pattern stuck in the regex sandbox cannot stall it either: timeout_ms 500 fires on time", async () => {
    // The backreference keeps this pattern out of the linear-time engine; on a line of a's it backtracks for ages.
    const seen = await monitorOnce({
      command: `echo "${"a".repeat(40)}"; exec sleep 30`,
      description: "stuck regex",
      result_pattern: "^DONE$",
      failure_pattern: "^(a+)+\\1b$",
      timeout_ms: 500,
    });
    expect(seen.lines).toEqual(expect.arrayContaining(["status=timeout", "reason=timeout", "timeout_ms=500"]));
    expect((seen.structured.result as { elapsedMs: number }).elapsedMs).toBeLessThan(5_000);
    expect(seen.tookMs).toBeLessThan(10_000);
  });
});
