/**
 * The UI's components rendered at 20, 40, 80 and 120 columns under Pi's real dark theme: activity rows, transcript
 * bands (through the Band component Pi draws) and the /monitor console. Every line must fit its width in terminal
 * columns. Named cases pin the monitor spec's rendering review: 24 KiB JSON preview vs full value, failure evidence
 * before a long command, twelve running jobs in a six-row terminal, complete values after session restore.
 */
import { highlightCode, initTheme, type Theme } from "@earendil-works/pi-coding-agent";
import { stripTerminalSequences, visibleWidth } from "@earendil-works/pi-tui";
import { beforeAll, describe, expect, it } from "vitest";
import { activityBudget, renderActivity, SPINNER_FRAMES } from "../../ui/activity.ts";
import { Band } from "../../ui/band.ts";
import { resultBandLines, startBandLines, TONE_STYLE, watchdogBandLines } from "../../ui/bands.ts";
import { initialState, reduce } from "../../ui/console-state.ts";
import { renderConsole } from "../../ui/console-view.ts";
import type { UiTheme } from "../../ui/theme.ts";
import { bigJson, failingResult, monitorJob, snapshotOf, START, terminalResult } from "../fixtures/ui-snapshots.ts";

let ui: UiTheme;
let theme: Theme;
beforeAll(() => {
  initTheme("dark");
  // Pi keeps the active theme on globalThis (its package exports no instance); renderers receive this one in Pi.
  theme = (globalThis as Record<symbol, Theme>)[Symbol.for("@earendil-works/pi-coding-agent:theme")] as Theme;
  ui = theme;
});

const WIDTHS = [20, 40, 80, 120] as const;
const plain = (lines: readonly string[]): string[] => lines.map((line) => stripTerminalSequences(line));

function expectFits(lines: readonly string[], width: number): void {
  for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
}

describe("activity rows", () => {
  it("budget is max(1, min(3, floor(rows / 6)))", () => {
    expect([4, 6, 11, 12, 17, 18, 24, 100].map(activityBudget)).toEqual([1, 1, 1, 2, 2, 3, 3, 3]);
  });

  for (const width of WIDTHS) {
    it(`twelve running jobs in a six-row terminal take one row with a /monitor hint (${width} columns)`, () => {
      const jobs = Array.from({ length: 12 }, (_, i) => ({ kind: i % 2 ? ("shell" as const) : ("monitor" as const), title: `job ${i}`, elapsedMs: i * 1000 }));
      const six = renderActivity(jobs, { width, terminalRows: 6, nowMs: 0, theme: ui });
      expect(six).toHaveLength(1);
      expectFits(six, width);
      if (width >= 40) expect(plain(six)[0]).toContain("12 jobs running · /monitor");
      const tall = plain(renderActivity(jobs, { width, terminalRows: 40, nowMs: 0, theme: ui }));
      expect(tall).toHaveLength(3);
      expect(tall[0]).toMatch(/^⠋ monitor · job 0/);
      if (width >= 40) expect(tall[2]).toContain("+10 more running · /monitor");
    });
  }

  it("one row per job while they fit, with the native spinner frames", () => {
    const rows = plain(renderActivity([{ kind: "monitor", title: "build", elapsedMs: 8400 }], { width: 80, terminalRows: 24, nowMs: 80 * 3, theme: ui }));
    expect(rows).toEqual([`${SPINNER_FRAMES[3]} monitor · build · 8.4s`]);
    expect(renderActivity([], { width: 80, terminalRows: 24, nowMs: 0, theme: ui })).toEqual([]);
  });
});

describe("transcript bands", () => {
  for (const width of WIDTHS) {
    it(`start and result headings keep status and colour at ${width} columns`, () => {
      const start = plain(startBandLines(START, { width, expanded: false, expandKey: "ctrl+o", theme: ui }));
      if (width < 32) expect(start).toEqual(["[started]"]);
      else expect(start[0]).toMatch(/^\[monitor\] started · run tests/);
      expect(start[0]?.includes("ctrl+o to expand")).toBe(width >= 60);
      for (const status of ["success", "failure", "timeout", "result_missing", "stopped"] as const) {
        const band = new Band((w) => resultBandLines(terminalResult({ status }), { width: w, expanded: false, expandKey: "ctrl+o", theme: ui, inConsole: true }), TONE_STYLE[status === "success" ? "success" : status === "stopped" ? "stopped" : "error"].bg, ui);
        const lines = band.render(width);
        expectFits(lines, width);
        const text = plain(lines)[0]?.trim();
        expect(text?.startsWith(width < 32 ? `[${status}]` : `[monitor] ${status}`)).toBe(true);
        // Failure-like outcomes sit on toolErrorBg, success on toolSuccessBg, stopped on the neutral pending background.
        const bg = status === "success" ? theme.getBgAnsi("toolSuccessBg") : status === "stopped" ? theme.getBgAnsi("toolPendingBg") : theme.getBgAnsi("toolErrorBg");
        expect(lines[0]).toContain(bg);
      }
    });
  }

  it("expanded start band: non-default completion and timeout, then the highlighted command, then the conditions", () => {
    const lines = startBandLines(
      { ...START, completion: "exit", timeoutMs: 420_000, failurePattern: "FAIL", command: "bun test\tx" },
      { width: 80, expanded: true, expandKey: "ctrl+o", theme: ui, highlight: (code) => highlightCode(code, "bash") },
    );
    expect(plain(lines)).toEqual([
      "[monitor] started · run tests",
      "Completion: exit",
      "Timeout: 7m",
      "Command (escaped controls):",
      "  bun test\\tx",
      "Success condition: TEST_RESULT (?<json>\\{.*\\})",
      "Failure condition: FAIL",
    ]);
    const defaults = plain(startBandLines(START, { width: 80, expanded: true, expandKey: "", theme: ui }));
    expect(defaults.some((line) => line.startsWith("Timeout") || line.startsWith("Completion"))).toBe(false);
  });

  it("24 KiB JSON: an 11-line preview with the original length while /monitor has it, the complete value after restore", () => {
    const value = bigJson(24 * 1024);
    const json = JSON.stringify(value);
    const result = terminalResult({ hasResult: true, result: value, captures: { json } });
    const preview = plain(resultBandLines(result, { width: 80, expanded: true, expandKey: "ctrl+o", theme: ui, inConsole: true }));
    expect(preview.length).toBeLessThanOrEqual(11);
    expect(preview.join("\n")).toContain(`preview of ${json.length.toLocaleString("en-US")} characters · /monitor: v full values`);
    // After a session reload (the monitor is not in this process's history), expansion shows every character.
    const restored = plain(resultBandLines(result, { width: 80, expanded: true, expandKey: "ctrl+o", theme: ui, inConsole: false }));
    expect(restored.length).toBeGreaterThan(200);
    const body = restored.slice(restored.findIndex((l) => l.startsWith("Result:"))).join("").replace(/^Result:\s?/, "");
    expect(body.startsWith(json)).toBe(true);
    for (const width of WIDTHS) expectFits(resultBandLines(result, { width, expanded: true, expandKey: "", theme: ui, inConsole: false }), width);
  });

  it("a watchdog wake about a running monitor: which one, and its figures, at every width", () => {
    const view = { description: "build project", monitorId: "monitor_3", figures: "231.0MiB and 95% CPU (passed: memory; watchdog: over 64.0MiB, or over 100% CPU for 10 min)" };
    for (const width of WIDTHS) {
      const lines = plain(watchdogBandLines(view, { width, expanded: false, expandKey: "ctrl+o", theme: ui }));
      expectFits(lines, width);
      if (width < 32) expect(lines).toEqual(["[runaway]"]);
      else expect(lines[0]).toMatch(/^\[monitor\] runaway · build project/);
    }
    const wide = plain(watchdogBandLines(view, { width: 200, expanded: false, expandKey: "ctrl+o", theme: ui }));
    expect(wide).toEqual(["[monitor] runaway · build project · monitor_3", `uses ${view.figures}; not stopped`]);
  });
});

describe("/monitor console", () => {
  const failing = failingResult();
  const longCommand = `set -e; ${"npm run step && ".repeat(40)}echo done`;

  for (const width of WIDTHS) {
    it(`failure evidence comes before a long command at ${width} columns`, () => {
      const job = monitorJob(1, failing, { config: [{ label: "Command", value: longCommand, layout: "code" }] });
      const snapshot = snapshotOf([job]);
      const view = renderConsole(snapshot, initialState(snapshot), { width, height: 200, theme: ui, highlight: (c) => highlightCode(c, "bash") });
      expectFits(view.lines, width);
      const text = plain(view.lines);
      const at = (prefix: string) => text.findIndex((line) => line.startsWith(prefix));
      for (const label of ["Status:", "Elapsed:", "Exit code:", "Reason:", "Warning:"]) {
        expect(at(label)).toBeGreaterThan(0);
        expect(at(label)).toBeLessThan(at("Name:"));
      }
      expect(at("Name:")).toBeLessThan(at("Command:"));
      expect(at("Output")).toBeGreaterThan(0);
    });
  }

  for (const [width, height] of [[80, 24], [40, 6], [20, 4], [120, 40]] as const) {
    it(`fits ${width}×${height} exactly, status before description in list rows`, () => {
      const jobs = Array.from({ length: 12 }, (_, i) => monitorJob(i + 1, i < 6 ? null : failing, { title: `job ${i + 1} ${"long description ".repeat(5)}` }));
      const snapshot = snapshotOf(jobs);
      const view = renderConsole(snapshot, initialState(snapshot), { width, height, theme: ui });
      expect(view.lines).toHaveLength(height);
      expectFits(view.lines, width);
      expect(plain(view.lines)[1]).toMatch(/^▸ running/);
      expect(plain(view.lines).at(-1)).toContain("? help");
    });
  }

  it("v switches previews to complete values, which follow the configuration so End reaches their tail", () => {
    const value = bigJson(24 * 1024);
    const json = JSON.stringify(value);
    const job = monitorJob(1, terminalResult({ hasResult: true, result: value }));
    const snapshot = snapshotOf([job]);
    let state = initialState(snapshot);
    const previews = plain(renderConsole(snapshot, state, { width: 80, height: 400, theme: ui }).lines);
    expect(previews.join("\n")).toContain("v full values");
    state = reduce(state, "toggleValues", snapshot, 20);
    state = reduce(state, "end", snapshot, 20);
    const view = renderConsole(snapshot, state, { width: 80, height: 24, theme: ui });
    const tail = plain(view.lines).slice(1, -1).join("");
    expect(tail).toContain(json.slice(-30));
    expect(view.scroll).toBeGreaterThan(100);
  });
});
