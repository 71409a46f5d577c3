import { describe, expect, it } from "vitest";
import { Value } from "typebox/value";
import type { DiagnosticLine, MonitorOutcome } from "../../mailbox/monitor.ts";
import { escapeJson, escapeText } from "../../host/safety/escape.ts";
import {
  markEarlierSession,
  buildAcknowledgement,
  buildReport,
  formatElapsed,
  payloadLines,
  runningResult,
  structuredResult,
  type ReportInput,
} from "../../host/monitor/report.ts";
import { RLE_ENCODING_LINE } from "../../host/monitor/rle.ts";
import { decodeRle, parseRle } from "../fixtures/unrle.ts";
import { MonitorStartOutput } from "../../host/monitor/schemas.ts";
import { outcome } from "../fixtures/monitor-outcomes.ts";
import { NO_EVIDENCE, type Evidence } from "../../mailbox/evidence.ts";
import { labelOutputLine, reportTail, shownTailLines } from "../../shared/report-tail.ts";
import { convertsEach } from "../fixtures/converts-each.ts";

const out = (source: DiagnosticLine["source"], text: string, count = 1, clipped = false): DiagnosticLine => ({
  source,
  text,
  count,
  clipped,
});

function input(fields: Partial<ReportInput> & { outcome: MonitorOutcome }): ReportInput {
  return {
    monitorId: "monitor_1",
    description: "job",
    elapsedMs: 33,
    timeoutMs: 600_000,
    compact: false,
    direct: true,
    expected: "^DONE$",
    evidence: NO_EVIDENCE,
    ...fields,
  };
}

const jsonSentinel = (json: string, extra: Partial<MonitorOutcome> = {}): MonitorOutcome =>
  outcome({
    completion: "exit",
    matched: `DONE ${json}`,
    matchedSource: "stdout",
    captures: { json },
    hasResult: true,
    result: JSON.parse(json) as unknown,
    exitCode: 0,
    ...extra,
  });

/** Lines the spec's five worked cases predate (monitor_id, completion, stopped_by, next). */
const LATER_RULES = /^(monitor_id|completion|stopped_by|next)=/;
const withoutLaterRules = (report: string): string =>
  report
    .split("\n")
    .filter((line) => !LATER_RULES.test(line))
    .join("\n");

describe("the spec's worked cases", () => {
  const case1 = input({
    description: "build project",
    elapsedMs: 33,
    expected: "__PI_MONITOR_RESULT__ (?<json>\\{.*\\})",
    outcome: outcome({
      completion: "exit",
      matched: '__PI_MONITOR_RESULT__ {"modules": 200, "status": "success"}',
      matchedSource: "stdout",
      captures: { json: '{"modules": 200, "status": "success"}' },
      hasResult: true,
      result: { modules: 200, status: "success" },
      exitCode: 0,
    }),
  });
  const case2 = input({
    monitorId: "monitor_2",
    description: "database migration",
    elapsedMs: 28,
    expected: "MIGRATION_OK",
    outcome: outcome({
      status: "failure",
      stoppedBy: "match",
      matched: "FATAL: migration failed: column exists",
      matchedSource: "stderr",
      captures: { error: "migration failed: column exists" },
      signal: "SIGTERM",
      output: [out("stderr", "FATAL: migration failed: column exists"), out("stdout", "configuring...")],
    }),
  });
  const case3 = input({
    monitorId: "monitor_3",
    description: "silent finish probe",
    elapsedMs: 7,
    expected: "EXPECTED_SENTINEL_XYZ",
    outcome: outcome({ status: "result_missing", exitCode: 0, output: [out("stdout", "Task finished without contract")] }),
  });
  const case4 = input({
    monitorId: "monitor_4",
    description: "timeout probe",
    elapsedMs: 802,
    timeoutMs: 800,
    expected: "NEVER_MATCH",
    outcome: outcome({ status: "timeout", signal: "SIGTERM", reason: "timeout" }),
  });

  /** The whole report, then the spec's text of it: the same report without the lines of the later rules. */
  function expectReport(input: ReportInput, lines: string[], specLines: string[]): void {
    const report = buildReport(input);
    expect(report).toBe(lines.join("\n"));
    expect(withoutLaterRules(report)).toBe(specLines.join("\n"));
  }

  it("case 1: a noisy build's JSON sentinel is the whole report", () => {
    expectReport(
      case1,
      [
        "Monitor: build project",
        "monitor_id=monitor_1",
        "status=success",
        "elapsed=33ms",
        "completion=exit",
        'result={"modules":200,"status":"success"}',
      ],
      ["Monitor: build project", "status=success", "elapsed=33ms", 'result={"modules":200,"status":"success"}'],
    );
  });

  it("case 2: a failure capture with its source-labelled tail", () => {
    expectReport(
      case2,
      [
        "Monitor: database migration",
        "monitor_id=monitor_2",
        "status=failure",
        "elapsed=28ms",
        "completion=match",
        "stopped_by=match",
        "capture.error=migration failed: column exists",
        'output=["[stderr] FATAL: migration failed: column exists","[stdout] configuring..."]',
        "next=fix the error the failure match reports, then rerun",
      ],
      [
        "Monitor: database migration",
        "status=failure",
        "elapsed=28ms",
        "capture.error=migration failed: column exists",
        'output=["[stderr] FATAL: migration failed: column exists","[stdout] configuring..."]',
      ],
    );
  });

  it("case 3: exit 0 without the sentinel is result_missing, naming what was expected", () => {
    expect(withoutLaterRules(buildReport(case3))).toBe(
      [
        "Monitor: silent finish probe",
        "status=result_missing",
        "elapsed=7ms",
        "expected=EXPECTED_SENTINEL_XYZ",
        "exit_code=0",
        'output=["[stdout] Task finished without contract"]',
      ].join("\n"),
    );
    expect(buildReport(case3)).toMatch(/\ncompletion=match\n/);
  });

  it("case 4: a timeout names its reason and deadline, not the kill's signal", () => {
    const report = buildReport(case4);
    expect(withoutLaterRules(report)).toBe(
      ["Monitor: timeout probe", "status=timeout", "elapsed=802ms", "reason=timeout", "timeout_ms=800"].join("\n"),
    );
    expect(report).not.toMatch(/signal=|exit_code=/);
  });

  it("case 5: the asynchronous acknowledgement", () => {
    expect(buildAcknowledgement("background verification", "monitor_1")).toBe(
      "Monitor started: background verification\nmonitor_id=monitor_1\nterminal_result=pending",
    );
  });

  it("every run that did not pass ends with exactly one next= line; a usable success has none", () => {
    const stopped = input({ outcome: outcome({ status: "stopped", signal: "SIGTERM", output: [out("stdout", "x")] }) });
    for (const report of [case2, case3, case4, stopped].map(buildReport)) {
      const lines = report.split("\n");
      expect(lines.filter((line) => line.startsWith("next=")).length).toBe(1);
      expect(lines.at(-1)).toMatch(/^next=\S/);
    }
    expect(buildReport(case1)).not.toMatch(/next=/);
  });
});

describe("report lines", () => {
  it("formats elapsed time as the spec's examples do", () => {
    expect(formatElapsed(7)).toBe("7ms");
    expect(formatElapsed(802.4)).toBe("802ms");
    expect(formatElapsed(999.4)).toBe("999ms");
    expect(formatElapsed(999.6)).toBe("1.0s");
    expect(formatElapsed(8_412)).toBe("8.4s");
    expect(formatElapsed(59_949)).toBe("59.9s");
    expect(formatElapsed(59_950)).toBe("1m00s");
    expect(formatElapsed(125_300)).toBe("2m05s");
    expect(formatElapsed(3_723_000)).toBe("1h02m03s");
    expect(formatElapsed(-5)).toBe("0ms");
  });

  it("a default success names its completion mode and, in match mode, that the contract stopped the run", () => {
    const report = buildReport(
      input({ outcome: outcome({ stoppedBy: "match", matched: "BUILD_OK", matchedSource: "stdout", signal: "SIGTERM" }) }),
    );
    expect(report).toBe(
      ["Monitor: job", "monitor_id=monitor_1", "status=success", "elapsed=33ms", "matched=BUILD_OK", "completion=match", "stopped_by=match"].join(
        "\n",
      ),
    );
  });

  it("shows the exit code and signal of a process that ended on its own", () => {
    const failed = buildReport(input({ outcome: outcome({ status: "failure", exitCode: 2, output: [out("stderr", "boom")] }) }));
    expect(failed).toMatch(/\nexit_code=2\n/);
    expect(failed).toMatch(/\nnext=find why it exited 2 in output/);
    const killed = buildReport(input({ outcome: outcome({ status: "failure", signal: "SIGSEGV" }) }));
    expect(killed).toMatch(/\nsignal=SIGSEGV\n/);
    expect(killed).toMatch(/next=find why it was killed by SIGSEGV/);
  });

  it("gives each machine reason its own next move", () => {
    const next = (reason: string) =>
      buildReport(input({ outcome: outcome({ status: "failure", reason, exitCode: 0 }) }))
        .split("\n")
        .find((line) => line.startsWith("next="));
    const moves = ["invalid_json_result", "matcher_line_limit", "matcher_queue_limit", "matcher_error", "log_quota", "spawn_failed"].map(next);
    expect(new Set(moves).size).toBe(moves.length);
    expect(buildReport(input({ outcome: outcome({ status: "failure", reason: "matcher_line_limit" }) }))).toMatch(
      /\nreason=matcher_line_limit\n/,
    );
  });

  it("labels output by source, with repeat counts and display clipping in the label", () => {
    expect(labelOutputLine(out("stdout", "compiling"))).toBe("[stdout] compiling");
    expect(labelOutputLine(out("stderr", "retrying", 120))).toBe("[stderr ×120] retrying");
    expect(labelOutputLine(out("stdout", "x".repeat(10), 2, true))).toBe("[stdout ×2 clipped] xxxxxxxxxx");
  });

  it("puts integrity warnings before the payload they qualify", () => {
    const report = buildReport(
      input({
        outcome: jsonSentinel('{"a":1}', { status: "failure", capturesTruncated: true, outputTruncated: true }),
      }),
    );
    const lines = report.split("\n");
    expect(lines.indexOf("captures_truncated=true")).toBeGreaterThan(-1);
    expect(lines.indexOf("output_truncated=true")).toBeGreaterThan(-1);
    expect(lines.indexOf("output_truncated=true")).toBeLessThan(lines.indexOf('result={"a":1}'));
  });

  it("does not warn about a cut diagnostic tail on a success, which shows no tail", () => {
    const report = buildReport(input({ outcome: jsonSentinel('{"a":1}', { outputTruncated: true }) }));
    expect(report).not.toContain("output_truncated");
  });

  it("reports a JSON parse error with the raw capture, and asks for a fix even though the status is success", () => {
    const report = buildReport(
      input({
        outcome: outcome({
          stoppedBy: "match",
          matched: "DONE {oops",
          captures: { json: "{oops" },
          resultParseError: "Unexpected token o in JSON at position 1",
        }),
      }),
    );
    expect(report).toMatch(/\nresult_parse_error=Unexpected token o in JSON at position 1\ncapture\.json=\{oops\n/);
    expect(report).not.toMatch(/\nresult=/);
    expect(report.split("\n").at(-1)).toMatch(/^next=/);
  });

  it("keeps falsy JSON results", () => {
    for (const [json, shown] of [["false", "false"], ["null", "null"], ["0", "0"], ['""', '""']]) {
      const report = buildReport(input({ outcome: jsonSentinel(json as string) }));
      expect(report).toMatch(new RegExp(`\\nresult=${shown}$`));
    }
  });
});

describe("evidence", () => {
  const evidence: Evidence = {
    count: 3,
    omitted: 0,
    blocks: [
      {
        line: 5,
        headline: "f101.c:2:14: error: 'undefined_symbol' undeclared (first use in this function)",
        lines: ["5: f101.c: In function 'f101':", "6: f101.c:2:14: error: 'undefined_symbol' undeclared (first use in this function)", "7:     2 |   return undefined_symbol;"],
      },
    ],
  };
  const failed = outcome({ status: "failure", completion: "exit", exitCode: 2, reason: "exit_code", output: [out("stdout", "make: Target 'all' not remade because of errors.")] });

  it("a run that did not pass shows its evidence before its tail, and next= names the first error", () => {
    const lines = buildReport(input({ outcome: failed, evidence })).split("\n");
    const at = lines.findIndex((line) => line.startsWith("evidence="));
    expect(JSON.parse(lines[at]!.slice("evidence=".length))).toEqual(evidence.blocks[0]!.lines);
    expect(lines[at + 1]).toMatch(/^output=/);
    expect(lines.at(-1)).toBe("next=see evidence (line 5: f101.c:2:14: error: 'undefined_symbol' undeclared (first use in this function)), fix it, then rerun");
  });

  it("without evidence next= points at the tail and the log, and the report has no evidence line", () => {
    const report = buildReport(input({ outcome: failed, logPath: "/tmp/pi-jobs-x/monitor_1" }));
    expect(report).not.toContain("evidence=");
    expect(report.split("\n").at(-1)).toBe("next=find why it exited 2 in output or earlier in /tmp/pi-jobs-x/monitor_1, fix it, then rerun");
  });

  it("a success says what went wrong on the way, compact or not; a clean success does not grow", () => {
    const success = outcome({ status: "success", completion: "exit", exitCode: 0 });
    expect(buildReport(input({ outcome: success, evidence }))).toContain("evidence=[");
    expect(buildReport(input({ outcome: success, evidence, compact: true }))).toContain("evidence=[");
    expect(buildReport(input({ outcome: success }))).toBe(buildReport(input({ outcome: success, evidence: NO_EVIDENCE })));
    expect(buildReport(input({ outcome: success }))).not.toContain("evidence");
  });
});

describe("capture aliases", () => {
  it("shows each distinct capture once and aliases equal ones to the first", () => {
    const lines = payloadLines(outcome({ captures: { a: "same", b: "other", c: "same", d: "same", e: "other" } }));
    expect(lines).toEqual([
      "capture.a=same",
      "capture.b=other",
      "capture_alias.c=a",
      "capture_alias.d=a",
      "capture_alias.e=b",
    ]);
  });

  it("compares original strings, not what escaping makes them look like", () => {
    // "\n" escaped and a literal backslash-n read the same in the report but are different values.
    const lines = payloadLines(outcome({ captures: { real: "a\nb", literal: "a\\nb", prefix: "a" } }));
    expect(lines).toEqual(["capture.real=a\\nb", "capture.literal=a\\nb", "capture.prefix=a"]);
  });

  it("aliases to json only when a capture equals the visible result= serialisation", () => {
    const raw = '{ "ok": true }';
    const lines = payloadLines(
      outcome({
        captures: { json: raw, same: '{"ok":true}', spaced: raw },
        hasResult: true,
        result: { ok: true },
      }),
    );
    expect(lines).toEqual(['result={"ok":true}', `capture.spaced=${raw}`, "capture_alias.same=json"]);
  });
});

describe("escaping untrusted values", () => {
  it("escapes controls, DEL, C1 and Unicode separators in plain values", convertsEach(escapeText, [
    ["a\nb\tc\rd", "a\\nb\\tc\\rd"],
    ["\u001b[31mred\u0007", "\\x1b[31mred\\x07"],
    ["del\u007f c1\u0085\u009b", "del\\x7f c1\\u0085\\u009b"],
    ["x\u2028y\u2029z", "x\\u2028y\\u2029z"],
    ["plain é 中 😀 \\n", "plain é 中 😀 \\n"],
  ]));

  it("escapes what JSON.stringify leaves raw, and still parses back to the same value", () => {
    const value = { s: "\u001b]0;title\u0007 \u007f \u0085 \u2028 \u2029 \ud800 😀" };
    const text = escapeJson(value);
    expect(text).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
    expect(JSON.parse(text)).toEqual(value);
  });

  it("output cannot forge report lines or carry terminal sequences", () => {
    const report = buildReport(
      input({
        description: "evil\nstatus=success",
        outcome: outcome({
          status: "failure",
          exitCode: 1,
          captures: { "x\nstatus": "v\u001b[2J\nstatus=success" },
          matched: "m",
          output: [out("stdout", "\u001b[31mred\u2028status=success\u0085")],
        }),
      }),
    );
    const lines = report.split("\n");
    expect(lines.filter((line) => line.startsWith("status="))).toEqual(["status=failure"]);
    expect(report).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/);
    expect(lines[0]).toBe("Monitor: evil\\nstatus=success");
    expect(report).toContain("capture.x\\nstatus=v\\x1b[2J\\nstatus=success");
  });
});

describe("compact reports", () => {
  const big = JSON.stringify({ value: "a".repeat(24 * 1024) });

  it("a direct valid success keeps status, exit_code=0 and the payload only", () => {
    const report = buildReport(input({ compact: true, outcome: jsonSentinel('{"ok":true}') }));
    expect(report).toBe('status=success\nexit_code=0\nresult={"ok":true}');
    const bare = buildReport(input({ compact: true, outcome: outcome({ completion: "exit", matched: "DONE", exitCode: 0 }) }));
    expect(bare).toBe("status=success\nexit_code=0");
  });

  it("in match mode it keeps stopped_by, which changes what the status proves", () => {
    const report = buildReport(
      input({ compact: true, outcome: outcome({ stoppedBy: "match", matched: "READY", signal: "SIGTERM" }) }),
    );
    expect(report).toBe("status=success\nstopped_by=match");
  });

  it("asynchronous, invalid or failed results keep their full identity", () => {
    const asyncReport = buildReport(input({ compact: true, direct: false, outcome: jsonSentinel('{"ok":true}') }));
    expect(asyncReport.split("\n").slice(0, 4)).toEqual(["Monitor: job", "monitor_id=monitor_1", "status=success", "elapsed=33ms"]);
    const truncated = buildReport(input({ compact: true, outcome: jsonSentinel('{"ok":true}', { capturesTruncated: true }) }));
    expect(truncated).toMatch(/^Monitor: job\nmonitor_id=monitor_1\n/);
    const failed = buildReport(input({ compact: true, outcome: outcome({ status: "failure", exitCode: 1 }) }));
    expect(failed).toMatch(/^Monitor: job\nmonitor_id=monitor_1\n/);
  });

  it("encodes a large repetitive payload losslessly and much smaller", () => {
    const plain = buildReport(input({ outcome: jsonSentinel(big) }));
    const compact = buildReport(input({ compact: true, outcome: jsonSentinel(big) }));
    const lines = compact.split("\n");
    expect(lines).toEqual([
      "status=success",
      "exit_code=0",
      RLE_ENCODING_LINE,
      `payload_rle=["result={\\"value\\":\\"",["a",${24 * 1024}],"\\"}"]`,
    ]);
    // The spec's decoder, verbatim in spirit: JSON.parse, then repeat.
    const encoded = lines.find((line) => line.startsWith("payload_rle="));
    const decoded = decodeRle(parseRle((encoded as string).slice("payload_rle=".length)));
    const plainPayload = plain.split("\n").filter((line) => line.startsWith("result=")).join("\n");
    expect(decoded).toBe(plainPayload);
    expect(compact.length).toBeLessThan(200);
  });

  it("decodes to the exact default payload including captures, aliases and escapes", () => {
    const noisy = "\u001b[0m\u2028é😀".repeat(300);
    const o = outcome({
      status: "failure",
      stoppedBy: "match",
      matched: "x",
      captures: { a: noisy, b: "tail", c: noisy, d: "z".repeat(500) },
      capturesTruncated: true,
      output: [out("stderr", "FATAL")],
    });
    const plain = buildReport(input({ outcome: o }));
    const compact = buildReport(input({ compact: true, outcome: o }));
    const encoded = compact.split("\n").find((line) => line.startsWith("payload_rle="));
    expect(encoded).toBeDefined();
    const payload = plain
      .split("\n")
      .filter((line) => /^(result|capture|capture_alias)[.=]/.test(line))
      .join("\n");
    expect(decodeRle(parseRle((encoded as string).slice("payload_rle=".length)))).toBe(payload);
    // Everything outside the payload is unchanged and in the same place.
    expect(compact.split("\n").filter((line) => !line.startsWith("payload_"))).toEqual(
      plain.split("\n").filter((line) => !payload.split("\n").includes(line)),
    );
    expect(compact).toMatch(/\ncaptures_truncated=true\n/);
    expect(compact).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/);
  });

  it("keeps the default text when encoding would not pay off", () => {
    const small = buildReport(input({ compact: true, direct: false, outcome: jsonSentinel('{"value":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}') }));
    expect(small).not.toMatch(/payload_/);
    let seed = 7;
    const random = Array.from({ length: 4000 }, () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return String.fromCharCode(97 + (seed % 26));
    }).join("");
    const entropy = buildReport(input({ compact: true, direct: false, outcome: jsonSentinel(JSON.stringify({ v: random })) }));
    expect(entropy).not.toMatch(/payload_/);
  });
});

describe("structured results", () => {
  const facts = {
    monitorId: "monitor_9",
    description: "export payload",
    elapsedMs: 61,
    timeoutMs: 5_000,
    startedAt: 1_700_000_000_000,
    completedAt: 1_700_000_000_061,
    evidence: NO_EVIDENCE,
  };

  it("carries the complete bounded outcome with identity and timing, and matches the output schema", () => {
    const big = JSON.stringify({ value: "b".repeat(24 * 1024) });
    const value = structuredResult({ ...facts, outcome: jsonSentinel(big) });
    expect(value.status).toBe("success");
    expect(value.result.result).toEqual(JSON.parse(big));
    expect(value.result).toMatchObject({
      ...facts,
      resultParseError: null,
      capturesTruncated: false,
      outputTruncated: false,
      captures: { json: big },
    });
    expect(Value.Check(MonitorStartOutput, value)).toBe(true);
    expect(Value.Check(MonitorStartOutput, runningResult("monitor_9", "export payload"))).toBe(true);
  });

  it("distinguishes a null result from no result", () => {
    const withNull = structuredResult({ ...facts, outcome: jsonSentinel("null") });
    expect("result" in withNull.result && withNull.result.result === null).toBe(true);
    const without = structuredResult({ ...facts, outcome: outcome({ status: "result_missing", exitCode: 0 }) });
    expect("result" in without.result).toBe(false);
    expect(without.result.hasResult).toBe(false);
  });

  it("keeps raw values that the report escapes", () => {
    const value = structuredResult({
      ...facts,
      outcome: outcome({ status: "failure", exitCode: 1, output: [out("stdout", "\u001b[31mred")] }),
    });
    expect(value.result.output[0]?.text).toBe("\u001b[31mred");
  });
});

describe("the tail a report shows", () => {
  const distinct = Array.from({ length: 100 }, (_, i) => out("stdout", `handled order ${i} for ${["ada", "eve", "bob", "kim"][i % 4]} ratio ${(i * 7919) % 1000}.${i % 7}`));
  const counter = Array.from({ length: 100 }, (_, i) => out("stdout", `step ${i + 1}: ok`));

  it("keeps the newest 40 lines of a tail that does not fold, and says how many came before", () => {
    const shown = reportTail(distinct, null);
    expect(shown[0]).toBe("⟪60 earlier lines: the structured result's output⟫");
    expect(shown.slice(-5)).toEqual(distinct.slice(-5).map(labelOutputLine));
    expect(shownTailLines(distinct, null)).toBe(40);
  });

  it("keeps a tail whole when it folds well", () => {
    expect(reportTail(counter, null)).toEqual(["[stdout] step 1: ok", "⟪×94⟫ [stdout] step {2..95}: ok", ...counter.slice(-5).map(labelOutputLine)]);
    expect(shownTailLines(counter, null)).toBe(100);
  });
});

describe("a report delivered after a session switch", () => {
  it("says right after its monitor_id that the monitor started in an earlier session", () => {
    const report = "Monitor: build\nmonitor_id=monitor_3\nstatus=success\nelapsed=1.0s";
    expect(markEarlierSession(report)).toBe("Monitor: build\nmonitor_id=monitor_3\nstarted_in=earlier_session\nstatus=success\nelapsed=1.0s");
  });
});
