/**
 * Output is untrusted (invariant 7): every C0 and C1 control, DEL, bidi overrides and an OSC 52 clipboard write fed
 * through each UI surface must come out as visible text, never as control data; tabs and carriage returns show as
 * explicit escapes; widths are terminal columns, wide characters included.
 */
import { visibleWidth } from "@earendil-works/pi-tui";
import { describe, expect, it } from "vitest";
import { renderActivity } from "../../ui/activity.ts";
import { resultBandLines, startBandLines } from "../../ui/bands.ts";
import { initialState } from "../../ui/console-state.ts";
import { renderConsole } from "../../ui/console-view.ts";
import { renderFields } from "../../ui/fields.ts";
import { sanitizeBlock, sanitizeInline } from "../../shared/sanitize.ts";
import { renderPicker } from "../../ui/sessions-picker.ts";
import { PLAIN_THEME } from "../fixtures/plain-theme.ts";
import { monitorJob, snapshotOf, START, terminalResult } from "../fixtures/ui-snapshots.ts";

const C0 = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join("");
const C1 = Array.from({ length: 32 }, (_, i) => String.fromCharCode(0x80 + i)).join("");
const OSC52 = "\u001b]52;c;cHduZWQ=\u0007";
const OSC52_ST = "\u001b]52;c;cHduZWQ=\u001b\\";
const HOSTILE = `a${C0}b\u007f${C1}c${OSC52}d${OSC52_ST}e\u001b[2J\u001b[31mred\u009b31mx\u202eevil\u2028f`;

// Anything a terminal would act on: C0 (newline only between lines), DEL, C1, bidi controls, separators.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

// pi-tui's truncation closes styles with this reset; with the plain theme it is the only sequence allowed.
const RESET = "\u001b[0m";

function expectClean(lines: readonly string[], width: number): void {
  for (const line of lines) {
    expect(line.replaceAll(RESET, "")).not.toMatch(CONTROL);
    expect(line).not.toContain("cHduZWQ=");
    expect(visibleWidth(line)).toBeLessThanOrEqual(width);
  }
}

describe("sanitizer", () => {
  it("removes complete escape sequences (CSI, OSC 52, 8-bit CSI) and shows every other control as an escape", () => {
    const { text, escaped } = sanitizeInline(HOSTILE);
    expect(escaped).toBe(true);
    expect(text).not.toMatch(CONTROL);
    expect(text).not.toContain("52;c");
    for (const shown of ["\\t", "\\r", "\\n", "\\x07", "\\x7f", "\\u0085", "\\u202e", "red"]) expect(text).toContain(shown);
    expect(text).not.toContain("[31m");
  });

  it("keeps lines in block mode and marks plain text as unescaped", () => {
    expect(sanitizeBlock("one\ntwo\tthree")).toEqual({ lines: ["one", "two\\tthree"], escaped: true });
    expect(sanitizeInline("plain 日本語 ✓")).toEqual({ text: "plain 日本語 ✓", escaped: false });
  });

  it("an unterminated OSC never leaks its payload", () => {
    expect(sanitizeInline("before\u001b]52;c;c2VjcmV0").text).toBe("before");
  });

  for (const width of [20, 40, 80, 120]) {
    it(`no surface lets a control through at ${width} columns`, () => {
      const result = terminalResult({
        status: "failure",
        description: `desc ${HOSTILE}`,
        matched: HOSTILE,
        captures: { [`name${C0}`]: HOSTILE },
        output: [{ source: "stderr", text: HOSTILE, count: 2, clipped: false }],
        reason: HOSTILE,
        exitCode: 1,
      });
      const theme = PLAIN_THEME;
      const surfaces: string[][] = [
        renderFields([{ label: "Value", value: HOSTILE, layout: "inline" }, { label: "Command", value: HOSTILE, layout: "code" }], {
          width,
          theme,
          fullValues: true,
          highlight: (code) => code.split("\n"),
        }),
        renderActivity([{ kind: "monitor", title: HOSTILE, elapsedMs: 5 }, { kind: "shell", title: HOSTILE, elapsedMs: 5 }], {
          width,
          terminalRows: 24,
          nowMs: 0,
          theme,
        }),
        startBandLines({ ...START, description: HOSTILE, command: HOSTILE, resultPattern: HOSTILE, failurePattern: HOSTILE }, {
          width,
          expanded: true,
          expandKey: "ctrl+o",
          theme,
        }),
        resultBandLines(result, { width, expanded: true, expandKey: "ctrl+o", theme, inConsole: false }),
      ];
      const job = monitorJob(1, result, {
        title: HOSTILE,
        output: { lines: [{ source: "stdout", text: HOSTILE }], droppedLines: 0, droppedBytes: 0 },
      });
      const shell = { ...job, key: "shell:1", kind: "shell" as const, id: "1" };
      const snapshot = snapshotOf([job, shell]);
      const state = { ...initialState(snapshot), showOutput: true, fullValues: true };
      surfaces.push(renderConsole(snapshot, state, { width, height: 60, theme }).lines);
      surfaces.push(renderConsole(snapshot, { ...state, help: true }, { width, height: 10, theme, notice: HOSTILE }).lines);
      surfaces.push(renderPicker(snapshot, { selectedKey: "shell:1", selectedIndex: 0, confirming: false }, { width, height: 24, theme, notice: HOSTILE }));
      for (const lines of surfaces) {
        expect(lines.length).toBeGreaterThan(0);
        expectClean(lines, width);
      }
    });
  }

  it("measures wide characters in terminal columns", () => {
    const lines = renderActivity([{ kind: "monitor", title: "構築".repeat(40), elapsedMs: 0 }], { width: 20, terminalRows: 24, nowMs: 0, theme: PLAIN_THEME });
    expect(visibleWidth(lines[0] as string)).toBeLessThanOrEqual(20);
    expect(lines[0]).toContain("構");
  });
});
