/**
 * The shell tools' transcript rows at 20, 40, 80 and 120 columns under Pi's real theme: the heading keeps the outcome
 * and its colour, collapsed rows show at most five output lines and never the model's metadata lines, expanded rows
 * show the supervision fields as `Label: value`, the log path and the whole output.
 */
import type { Theme } from "@earendil-works/pi-coding-agent";
import { stripTerminalSequences, visibleWidth } from "@earendil-works/pi-tui";
import { beforeAll, describe, expect, it } from "vitest";
import { Band } from "../../ui/band.ts";
import { TONE_STYLE } from "../../ui/bands.ts";
import {
  callRowLines,
  errorRowLines,
  killRowLines,
  listRowLines,
  processRowLines,
  setOnExitRowLines,
  shellTone,
  wakeRowLines,
} from "../../ui/shell-rows.ts";
import { exitedResult, killResult, listResult, processResult, SET_ON_EXIT, WAKE } from "../fixtures/shell-results.ts";
import { piTheme } from "../fixtures/ui-vterm.ts";

const WIDTHS = [20, 40, 80, 120] as const;
let theme: Theme;
beforeAll(() => {
  theme = piTheme("dark");
});

const plain = (lines: readonly string[]): string[] => lines.map((line) => stripTerminalSequences(line).trimEnd());
const options = (width: number, expanded = false) => ({ width, expanded, expandKey: "ctrl+o", theme });

function expectFits(lines: readonly string[], width: number): void {
  for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
}

/** Lines the model reads that must never appear in a collapsed row. */
const MODEL_ONLY = /^(supervision:|wait:|log_path:|elapsed_ms:|output \()/;

describe("shell rows", () => {
  for (const width of WIDTHS) {
    it(`a running PTY job: outcome, command, session and hint, then its output, at ${width} columns`, () => {
      const lines = processRowLines(processResult(), options(width));
      expectFits(lines, width);
      const text = plain(lines);
      if (width < 32) expect(text[0]).toBe("[running]");
      else expect(text[0]).toMatch(/^\[shell\] running · node -i · session 1/);
      expect(text[0]?.includes("ctrl+o to expand")).toBe(width >= 60);
      const expected = ["Welcome to Node.js v22.23.3.", 'Type ".help" for more information.', ">"];
      const shown = text.slice(1).map((line) => line.trim());
      expect(shown.length).toBe(expected.length);
      shown.forEach((line, i) => expect(expected[i]!.startsWith(line.replace(/…$/, ""))).toBe(true));
      if (width >= 80) expect(shown).toEqual(expected);
      for (const line of text) expect(line).not.toMatch(MODEL_ONLY);
    });

    it(`an exited job shows at most its last five output lines and the outcome colour at ${width} columns`, () => {
      for (const code of [0, 1]) {
        const result = exitedResult(code);
        const band = new Band((w) => processRowLines(result, options(w)), TONE_STYLE[shellTone(result)].bg, theme);
        const lines = band.render(width);
        expectFits(lines, width);
        const text = plain(lines);
        expect(text[0]?.trim()).toMatch(width < 32 ? new RegExp(`^\\[exited ${code}\\]$`) : new RegExp(`^\\[shell\\] exited ${code} · npm test · 12\\.4s`));
        expect(text.length).toBe(1 + 5);
        if (width >= 80) expect(text.at(-1)?.trim()).toBe(code === 0 ? "Test Files  12 passed" : "Test Files  1 failed | 11 passed");
        expect(lines[0]).toContain(theme.getBgAnsi(code === 0 ? "toolSuccessBg" : "toolErrorBg"));
        for (const line of text) expect(line.trim()).not.toMatch(MODEL_ONLY);
      }
    });

    it(`expanded: supervision as Label: value rows, the log path and the whole output at ${width} columns`, () => {
      const result = exitedResult(1, { notes: ["wrote 12 bytes"] });
      const lines = processRowLines(result, options(width, true));
      expectFits(lines, width);
      const text = plain(lines).join("\n");
      for (const label of ["Command:", "Elapsed:", "Wait:", "State:", "Log:", "Cleanup:", "Log path:", "Note:", "Output"]) expect(text).toContain(label);
      if (width >= 80) {
        expect(text).toContain("Log path: /tmp/pi-jobs-abc/job_3");
        for (let i = 0; i < 12; i += 1) expect(text).toContain(`case-${i}.test.ts`);
        expect(text).toContain("Output (80 B read, text)");
      }
      expect(text).not.toContain("supervision:");
    });

    it(`list, set_on_exit, kill, wake, call and error rows fit and keep their outcome at ${width} columns`, () => {
      const rows: [string[], string][] = [
        [listRowLines(listResult(8), options(width)), "sessions"],
        [setOnExitRowLines(SET_ON_EXIT, options(width)), "wake armed"],
        [killRowLines(killResult(), options(width)), "stopped"],
        [killRowLines(killResult({ killed: false, status: "running", running: true }), options(width)), "stop unconfirmed"],
        [wakeRowLines(WAKE, options(width)), "wake"],
        [callRowLines("exec_command", { cmd: "npm test", tty: true }, options(width)), "starting"],
        [callRowLines("write_stdin", { session_id: 1, chars: "[1, 2, 3]\\n" }, options(width)), "input"],
        [errorRowLines("write_stdin: unknown session_id 9; known sessions: 1", options(width)), "error"],
      ];
      for (const [lines, outcome] of rows) {
        expectFits(lines, width);
        const head = plain(lines)[0]!;
        if (width < 32) expect(`[${outcome}]`.startsWith(head.replace(/…$/, ""))).toBe(true);
        else expect(head.startsWith(`[shell] ${outcome}`)).toBe(true);
      }
      for (const expanded of [listRowLines(listResult(8), options(width, true)), wakeRowLines(WAKE, options(width, true)), killRowLines(killResult(), options(width, true))]) {
        expectFits(expanded, width);
        expect(plain(expanded).some((line) => line.startsWith("Log path:"))).toBe(true);
      }
    });
  }

  it("the wake row counts the jobs and lists each with its outcome", () => {
    const text = plain(wakeRowLines(WAKE, options(120)));
    expect(text[0]).toBe("[shell] wake · 2 jobs finished · ctrl+o to expand");
    expect(text.slice(1).map((line) => line.trim())).toEqual(["3 · exited 0 · npm run build · 2.1s", "4 · exited 1 · npm test · 8.4s"]);
  });

  it("a list shows five sessions collapsed and counts the rest", () => {
    const text = plain(listRowLines(listResult(8), options(120)));
    expect(text[0]).toBe("[shell] sessions · 6 running · 2 finished · ctrl+o to expand");
    expect(text.length).toBe(1 + 5 + 1);
    expect(text.at(-1)?.trim()).toBe("… 3 more");
  });
});
