/**
 * wait_jobs' pure parts: its arguments (errors name the field), when a call may return, the per-job lines and the
 * summary, the text the model reads, and the transcript row (one band per job) under Pi's real theme.
 */
import type { Theme } from "@earendil-works/pi-coding-agent";
import { stripTerminalSequences, visibleWidth } from "@earendil-works/pi-tui";
import { beforeAll, describe, expect, it } from "vitest";
import { summaryOf } from "../../host/wait/lines.ts";
import { lastLines } from "../../host/last-lines.ts";
import type { WaitJobLine, WaitJobsResult } from "../../host/wait/result.ts";
import { waitJobsText } from "../../host/wait/result-text.ts";
import { conditionMet } from "../../host/wait/until.ts";
import { DEFAULT_WAIT_MS, validateWaitJobs } from "../../host/wait/validate.ts";
import { waitJobLines, waitJobTone, waitSummaryLines } from "../../ui/wait-rows.ts";
import { piTheme } from "../fixtures/ui-vterm.ts";

const line = (over: Partial<WaitJobLine>): WaitJobLine => ({
  id: "job_1",
  kind: "shell",
  session_id: 1,
  label: "npm test",
  verdict: "success",
  status: "exited",
  exit_code: 0,
  duration_ms: 1200,
  collected: "now",
  log_path: "/tmp/logs/job_1",
  ...over,
});

describe("wait_jobs arguments", () => {
  it("defaults to every uncollected job, until all, ten minutes", () => {
    expect(validateWaitJobs(undefined)).toEqual({ ok: true, value: { ids: null, until: "all", timeoutMs: DEFAULT_WAIT_MS } });
    expect(validateWaitJobs({ ids: null })).toMatchObject({ ok: true, value: { ids: null } });
  });

  it("reads shell session ids as numbers, strings or job_N, monitors as monitor_N, and names a job once", () => {
    const checked = validateWaitJobs({ ids: [3, "4", "job_5", "monitor_2", "job_3"], until: "first_failure", timeout_ms: 1500 });
    expect(checked).toEqual({
      ok: true,
      value: {
        ids: [
          { kind: "shell", sessionId: 3 },
          { kind: "shell", sessionId: 4 },
          { kind: "shell", sessionId: 5 },
          { kind: "monitor", monitorId: "monitor_2" },
        ],
        until: "first_failure",
        timeoutMs: 1500,
      },
    });
  });

  it.each([
    [{ ids: [] }, "wait_jobs: ids is an empty list"],
    [{ ids: "3" }, "wait_jobs: ids must be a list"],
    [{ ids: ["build", 0] }, 'wait_jobs: ids: "build", 0 are not job ids'],
    [{ until: "first" }, 'wait_jobs: until: "first" is not one of all, any, first_failure'],
    [{ timeout_ms: -5 }, "wait_jobs: timeout_ms: -5 is negative"],
    [{ timeout_ms: "soon" }, 'wait_jobs: timeout_ms: "soon" is not a number'],
    [{ session_id: 3 }, "wait_jobs: unknown field session_id"],
  ])("rejects %j", (raw, message) => {
    const checked = validateWaitJobs(raw);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.error).toContain(message);
  });
});

describe("when a wait may return", () => {
  it.each([
    ["all", ["success", "running"], null],
    ["all", ["success", "failure", "stopped"], "all_ended"],
    ["any", ["running", "running"], null],
    ["any", ["running", "failure"], "one_ended"],
    ["first_failure", ["running", "success"], null],
    ["first_failure", ["running", "failure"], "failed"],
    ["first_failure", ["success", "stopped"], "all_ended"],
    ["all", [], "nothing_to_wait_for"],
  ] as const)("until %s with %j: %s", (until, verdicts, expected) => {
    expect(conditionMet(until, verdicts)).toBe(expected);
  });
});

describe("lines and summary", () => {
  it("keeps a read's last lines and counts the rest; trailing blank lines do not count", () => {
    expect(lastLines("a\nb\nc\nd\n\n", 2)).toEqual({ text: "c\nd", omitted: 2, shown: 2 });
    expect(lastLines("", 3)).toEqual({ text: "", omitted: 0, shown: 0 });
    // Folded output counts as printed: a fold stands for its N lines, a digest for the lines it left out.
    const folded = ["1", "⟪×10⟫ {2..11}", "⟪omitted 500 lines (4000 bytes) between head and tail: …⟫", "⟪×500⟫ {12..511}", "⟪end of omitted⟫", "512", "513"].join("\n");
    expect(lastLines(folded, 1)).toEqual({ text: "513", omitted: 512, shown: 1 });
  });

  it("folds the kept lines as a read over its budget does, keeping the last ones verbatim", () => {
    const make = Array.from({ length: 11 }, (_, i) => `gcc -Wall -O1 -c f${110 + i}.c -o o/f${110 + i}.o`);
    const kept = lastLines([...make, "make: Target 'all' not remade because of errors."].join("\n"), 12);
    expect(kept.shown).toBe(12);
    expect(kept.text.split("\n")).toEqual([
      make[0],
      "⟪×8⟫ gcc -Wall -O1 -c f{111..118}.c -o o/f{111..118}.o",
      ...make.slice(9),
      "make: Target 'all' not remade because of errors.",
    ]);
  });

  it("summarises as the issue shows: counts, the failures with their cause, the longest duration", () => {
    const lines = [
      ...Array.from({ length: 7 }, (_, i) => line({ id: `job_${i + 1}`, duration_ms: 1000 * (i + 1) })),
      line({ id: "job_8", verdict: "failure", exit_code: 1, duration_ms: 41_200 }),
    ];
    expect(summaryOf(lines)).toBe("8 jobs: 7 success, 1 failure (job_8 exit 1) · 41.2s");
    const mixed = [line({}), line({ id: "monitor_2", kind: "monitor", verdict: "failure", status: "timeout" }), line({ id: "job_3", verdict: "running" })];
    expect(summaryOf(mixed)).toBe("3 jobs: 1 success, 1 failure (monitor_2 timeout), 1 running · 1.2s");
  });

  it("writes one line per job with its last output lines indented, then the summary and how the wait ended", () => {
    const result: WaitJobsResult = {
      operation: "wait_jobs",
      until: "all",
      wait_status: "all_ended",
      waited_ms: 3100,
      jobs: [
        line({ output: "ok 12 tests" }),
        line({ id: "job_2", label: "npm run lint", verdict: "failure", exit_code: 1, output: "x\u001b[31m\ny", output_lines_omitted: 40 }),
        line({ id: "monitor_3", kind: "monitor", label: "build", status: "success", exit_code: 0, captures: { url: "http://x" }, log_path: null }),
        line({ id: "job_4", collected: "earlier", output: undefined }),
      ],
      running: [],
      summary: "4 jobs: 3 success, 1 failure (job_2 exit 1) · 1.2s",
    };
    const text = waitJobsText(result);
    expect(text.split("\n")).toEqual([
      "job_1 exited 0 · npm test · 1.2s · log /tmp/logs/job_1",
      "  ok 12 tests",
      "job_2 exited 1 · npm run lint · 1.2s · log /tmp/logs/job_1",
      "  … 40 earlier lines",
      "  x\\x1b[31m",
      "  y",
      'monitor_3 success · build · 1.2s · captures={"url":"http://x"}',
      "job_4 exited 0 · npm test · 1.2s · collected earlier (write_stdin replays a shell job's read once) · log /tmp/logs/job_1",
      "4 jobs: 3 success, 1 failure (job_2 exit 1) · 1.2s",
      "wait: all_ended (every job has ended) · waited 3.1s",
    ]);
  });
});

describe("the transcript row", () => {
  let theme: Theme;
  beforeAll(() => {
    theme = piTheme("dark");
  });
  const options = (width: number, expanded = false) => ({ width, expanded, expandKey: "ctrl+o", theme });
  const plain = (lines: string[]) => lines.map((l) => stripTerminalSequences(l));

  it("draws a job as one heading line, a failure with its last lines, and fits every width", () => {
    const ok = line({ output: "a\nb" });
    const failed = line({ id: "job_2", verdict: "failure", exit_code: 1, output: Array.from({ length: 9 }, (_, i) => `err ${i}`).join("\n") });
    for (const width of [20, 40, 80, 120]) {
      for (const l of [...waitJobLines(ok, options(width)), ...waitJobLines(failed, options(width))]) expect(visibleWidth(l)).toBeLessThanOrEqual(width);
    }
    expect(plain(waitJobLines(ok, options(80)))).toHaveLength(1);
    expect(plain(waitJobLines(ok, options(80)))[0]).toMatch(/^\[wait\] job_1 exited 0 · npm test · 1\.2s/);
    const collapsed = plain(waitJobLines(failed, options(80)));
    expect(collapsed).toHaveLength(6);
    expect(collapsed.at(-1)).toContain("err 8");
    expect(waitJobTone(failed)).toBe("error");
  });

  it("expanded, shows the log path and every kept line; the summary band closes the row", () => {
    const expanded = plain(waitJobLines(line({ output: "a\nb", output_lines_omitted: 3 }), options(80, true))).join("\n");
    expect(expanded).toContain("/tmp/logs/job_1");
    expect(expanded).toContain("3 earlier lines");
    const summary = plain(waitSummaryLines({ until: "any", wait_status: "one_ended", jobs: [line({})], summary: "1 job: 1 success, 0 failure · 1.2s" }, options(80)));
    expect(summary[0]).toContain("[wait] 1 job: 1 success, 0 failure · 1.2s · until any · one ended");
  });
});
