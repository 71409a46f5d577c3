/**
 * The UI's surfaces through a virtual terminal (xterm.js headless) at 20, 40, 80 and 120 columns under Pi's real
 * theme: activity rows, the /monitor console (list, details, output, help), the sessions picker, the transcript
 * bands and the metrics footer. The terminal's buffer must show each rendered line on exactly one row, every
 * character in the cells pi-tui's visibleWidth gives it, and nothing else; hostile job output, descriptions,
 * commands and captures (every C0 and C1 control, OSC 52 with BEL and ST, CSI cursor movement, ESC c, bidi
 * overrides, tabs, CR) must change nothing but the text they are shown as.
 */
import { highlightCode, type Theme } from "@earendil-works/pi-coding-agent";
import { beforeAll, describe, expect, it } from "vitest";
import type { MonitorTerminalResult } from "../../host/monitor/schemas.ts";
import { footerStyle } from "../../host/metrics/footer-slot.ts";
import type { FooterModel } from "../../host/metrics/views.ts";
import type { JobsSnapshot, JobView } from "../../ui/views.ts";
import { renderActivity } from "../../ui/activity.ts";
import { Band } from "../../ui/band.ts";
import { resultBandLines, resultTone, startBandLines, TONE_STYLE } from "../../ui/bands.ts";
import { MonitorConsole } from "../../ui/console.ts";
import type { ConsoleSource } from "../../ui/jobs-overlay.ts";
import { renderFooter, type FooterStyle } from "../../host/metrics/footer.ts";
import { sanitizeStatus } from "../../host/metrics/statuses.ts";
import { SessionsPicker } from "../../ui/sessions-picker.ts";
import { callRowLines, killRowLines, listRowLines, processRowLines, setOnExitRowLines, shellTone, wakeRowLines } from "../../ui/shell-rows.ts";
import { bigJson, failingResult, monitorJob, snapshotOf, START, terminalResult } from "../fixtures/ui-snapshots.ts";
import { paint, piTheme, renderWithPiTui, type Painted } from "../fixtures/ui-vterm.ts";
import { exitedResult, killResult, listResult, processResult, SET_ON_EXIT, WAKE } from "../fixtures/shell-results.ts";

const WIDTHS = [20, 40, 80, 120] as const;
const OUTCOMES = ["success", "failure", "timeout", "result_missing", "stopped"] as const;

let theme: Theme;
beforeAll(() => {
  theme = piTheme("dark");
});

// ── Hostile text ─────────────────────────────────────────────────────────────────────────────────────────────────

const C0 = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join("");
const C1 = Array.from({ length: 32 }, (_, i) => String.fromCharCode(0x80 + i)).join("");
const OSC52_BEL = "\u001b]52;c;cHduZWQ=\u0007";
const OSC52_ST = "\u001b]52;c;cHduZWQ=\u001b\\";
const OSC52_C1 = "\u009d52;c;cHduZWQ=\u009c";
const TITLE = "\u001b]0;pwned\u0007\u001b]2;pwned\u001b\\";
const CURSOR =
  "\u001b[5A\u001b[3B\u001b[10C\u001b[2D\u001b[1;1H\u001b[H\u001b[2J\u001b[3J\u001b[K\u001b[s\u001b[u\u001b7\u001b8\u001bM\u001bD\u001bE" +
  "\u001b[?25l\u001b[?1049h\u001b[1;3r\u009b2J\u009b5A";
const RESET = "\u001bc";
const DCS = "\u001bP$q m\u001b\\";
const LINK = "\u001b]8;;https://evil.example/\u0007click\u001b]8;;\u0007";
const BIDI = "\u202aa\u202bb\u202cc\u202dd\u202ee\u2066f\u2067g\u2068h\u2069i";
const TABS_CR = "col1\tcol2\rover\r\nnext";
/** Not a control, but drawn by the terminal as U+FFFD in a cell pi-tui does not count. */
const LONE_SURROGATES = "\ud800x\udc00";
/** Everything at once; the visible words between the attacks must survive. */
const HOSTILE = ["start", LONE_SURROGATES, OSC52_BEL, "one", OSC52_ST, "two", OSC52_C1, "three", TITLE, CURSOR, RESET, DCS, LINK, BIDI, TABS_CR, C0, "\u007f", C1, "end"].join(" ");
/** One value per control character, so each is seen on its own (an 8-bit introducer swallows what follows it). */
const CONTROLS = [...C0, "\u007f", ...C1, "\u2028", "\u2029", ..."\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069", "\ud800", "\udfff"];
const EACH_CONTROL = CONTROLS.map((char) => `ctl ${char.codePointAt(0)?.toString(16).padStart(2, "0")}: a${char}b`);
/** What the sanitizer must show for a control that is not a sequence introducer. */
function visibleEscape(char: string): string {
  const code = char.codePointAt(0) as number;
  if (char === "\t") return "\\t";
  if (char === "\r") return "\\r";
  if (char === "\n") return "\\n";
  return code < 0x20 || code === 0x7f ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
}
const INTRODUCERS = new Set(["\u001b", "\u0090", "\u0098", "\u009b", "\u009d", "\u009e", "\u009f"]);

const WIDE = "構築 ✅ 日本語 😀 ＡＢ 한국어 e\u0301";

// ── Helpers ──────────────────────────────────────────────────────────────────────────────────────────────────────

/** Paints and requires a faithful screen whose used rows are exactly the rendered lines. */
async function shows(lines: readonly string[], width: number, options: { rows?: number } = {}): Promise<Painted> {
  const painted = await paint(lines, width, options);
  expect(painted.problems).toEqual([]);
  expect(painted.usedRows).toBe(lines.length);
  return painted;
}

function shellJob(id: number, overrides: Partial<JobView> = {}): JobView {
  const base = monitorJob(id, null);
  return {
    ...base,
    key: `shell:${id}`,
    kind: "shell",
    id: String(id),
    title: `npm run dev --port ${3000 + id}`,
    head: [],
    body: [
      { label: "Session", value: String(id), layout: "inline" },
      { label: "Terminal", value: "PTY", layout: "inline" },
      { label: "On exit", value: "wake", layout: "inline" },
      { label: "Unread", value: "120 bytes", layout: "inline" },
    ],
    config: [
      { label: "Command", value: `npm run dev --port ${3000 + id}`, layout: "code" },
      { label: "Working directory", value: "/work/project", layout: "inline" },
      { label: "Lifetime", value: "3600s", layout: "inline" },
    ],
    ...overrides,
  };
}

/** A console source over a fixed snapshot; output is attached only for the job it is asked for, as the host does. */
function sourceOf(snapshot: JobsSnapshot, output: Record<string, JobView["output"]> = {}): ConsoleSource {
  return {
    snapshot: (request) => ({
      ...snapshot,
      jobs: snapshot.jobs.map((job) => {
        const kept = output[job.key];
        return request.outputFor === job.key && kept !== undefined ? { ...job, output: kept } : job;
      }),
    }),
    stop: async (key) => `stopped ${key}`,
    stopAll: async () => "stopped all",
  };
}

const NO_KEYS = { matches: () => false };

/** Lets a stop's answer (a resolved promise) reach the component. */
const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const band = (build: (w: number) => string[], bg: Parameters<Band["update"]>[1]) => new Band(build, bg, theme);

function consoleOf(snapshot: JobsSnapshot, rows: number, output: Record<string, JobView["output"]> = {}): MonitorConsole {
  return new MonitorConsole({
    source: sourceOf(snapshot, output),
    host: { requestRender: () => {}, rows: () => rows },
    theme,
    keys: NO_KEYS,
    onClose: () => {},
    highlight: (code) => highlightCode(code, "bash"),
  });
}

function footerModel(over: Partial<FooterModel> = {}): FooterModel {
  return {
    cwd: "~/project",
    gitBranch: "feature/demo",
    sessionName: "refactor",
    model: "provider/model",
    thinkingLevel: "high",
    activity: "running",
    responseLabel: null,
    ttftMs: 840,
    effTps: 38.4,
    effQualifier: "so_far",
    obsTps: 42.6,
    inputTokens: 12_000,
    outputTokens: 2100,
    cost: 0.012,
    cacheRead: 8200,
    cacheWrite: 120,
    cacheHit: 0.4,
    contextPercent: 74,
    contextTokens: 148_000,
    contextWindow: 200_000,
    agent: { label: "reviewer", ttftMs: 1200, effTps: 51.2, state: "running", active: 2 },
    jobs: { running: 3, linesPerSecond: 4200, bytesPerSecond: 512 * 1024, eventLoopDelayP99Ms: 4 },
    statuses: [{ key: "lsp", text: "LSP: 2 errors" }],
    warnings: [],
    collapsed: false,
    ...over,
  };
}

const failing = failingResult(3);

function outcome(status: (typeof OUTCOMES)[number], overrides: Partial<MonitorTerminalResult> = {}): MonitorTerminalResult {
  const facts: Record<(typeof OUTCOMES)[number], Partial<MonitorTerminalResult>> = {
    success: { stoppedBy: "match", hasResult: true, result: { passed: 42, failed: 0 }, captures: { json: '{"passed":42,"failed":0}' } },
    failure: { exitCode: 1, reason: "failure_pattern", matched: "FAIL src/a.test.ts", output: [{ source: "stderr", text: "FAIL src/a.test.ts", count: 1, clipped: false }] },
    timeout: { reason: "timeout after 10m", stoppedBy: null, matched: null, output: [{ source: "stdout", text: "still waiting…", count: 12, clipped: true }] },
    result_missing: { exitCode: 0, stoppedBy: null, matched: null, reason: "exit 0 without a match" },
    stopped: { stoppedBy: null, matched: null, reason: "stopped by the user" },
  };
  return terminalResult({ status, ...facts[status], ...overrides });
}

// ── The harness ──────────────────────────────────────────────────────────────────────────────────────────────────

describe("the virtual terminal", () => {
  it("catches what a renderer must never do: control data, title changes, cursor movement, wrapping, writes past a line", async () => {
    const raw = await paint([`a${OSC52_BEL}b${TITLE}c\u001b[5Ad${RESET}e`, "y".repeat(21), "tab\there", "\u0007bell"], 20);
    expect(raw.escapes.some((e) => e.startsWith("OSC 52;c;cHduZWQ="))).toBe(true);
    expect(raw.titles).toContain("pwned");
    expect(raw.escapes).toContain("CSI 5A");
    expect(raw.escapes).toContain("ESC c");
    expect(raw.bells).toBe(1);
    const text = raw.problems.join("\n");
    expect(text).toMatch(/line 1: 21 cells in a 20-column terminal/);
    expect(text).toMatch(/row 2: continues the row above/);
    expect(text).toMatch(/line 2: carries control character U\+0009/);
    expect(text).toMatch(/line 0: cursor at row/);
    // A lone surrogate arrives as U+FFFD in a cell pi-tui did not count.
    const lone = await paint([`${"z".repeat(19)}\ud800`], 20);
    expect(lone.rows[0]).toBe(`${"z".repeat(19)}\ufffd`);
    expect(lone.problems).toContain("line 0: cursor at row 0 column 20, expected row 0 column 19");
  });

  it("shows styled text, wide characters and emoji in the cells pi-tui counts", async () => {
    const line = `${theme.fg("accent", "ok")} ${theme.bold(WIDE)}`;
    const screen = await shows([line, `${"構".repeat(19)}x`], 40);
    expect(screen.rows[0]).toBe(`ok ${WIDE}`);
    // 構 takes two cells: the next cell is its second half.
    expect(screen.cells[0]?.slice(3, 6)).toEqual(["構", "", "築"]);
    expect(screen.cells[1]?.slice(36)).toEqual(["構", "", "x", ""]);
  });
});

// ── Surfaces ─────────────────────────────────────────────────────────────────────────────────────────────────────

describe("activity rows", () => {
  for (const width of WIDTHS) {
    it(`one row per job at ${width} columns`, async () => {
      const jobs = [
        { kind: "monitor" as const, title: "run tests", elapsedMs: 8400 },
        { kind: "shell" as const, title: "npm run dev\n  --port 3000", elapsedMs: 125_000 },
        { kind: "monitor" as const, title: WIDE, elapsedMs: 400 },
      ];
      const lines = renderActivity(jobs, { width, terminalRows: 24, nowMs: 0, theme });
      const screen = await shows(lines, width);
      expect(screen.rows.slice(0, 3).every((row) => row.startsWith("⠋ "))).toBe(true);
      if (width >= 40) expect(screen.rows[1]).toMatch(/^⠋ shell · npm run dev · 2m05s$/);
    });

    it(`twelve running jobs in a six-row terminal: one row with a /monitor hint (${width} columns)`, async () => {
      const jobs = Array.from({ length: 12 }, (_, i) => ({ kind: i % 2 ? ("shell" as const) : ("monitor" as const), title: `job ${i}`, elapsedMs: i * 1000 }));
      const lines = renderActivity(jobs, { width, terminalRows: 6, nowMs: 0, theme });
      const screen = await shows(lines, width, { rows: 6 });
      expect(screen.usedRows).toBe(1);
      if (width >= 40) expect(screen.rows[0]).toBe("⠋ 12 jobs running · /monitor");
      else expect(screen.rows[0]).toMatch(/^⠋ 12 jobs running/);
    });

    it(`hostile descriptions and commands are only text at ${width} columns`, async () => {
      const jobs = [
        { kind: "monitor" as const, title: HOSTILE, elapsedMs: 5 },
        { kind: "shell" as const, title: HOSTILE, elapsedMs: 5 },
      ];
      const screen = await shows(renderActivity(jobs, { width, terminalRows: 24, nowMs: 0, theme }), width);
      expect(screen.escapes).toEqual([]);
      expect(screen.titles).toEqual([]);
      if (width >= 80) expect(screen.rows[0]).toMatch(/^⠋ monitor · start \\ud800x\\udc00 +one +two +three/);
    });
  }
});

describe("transcript bands", () => {
  const highlight = (code: string) => highlightCode(code, "bash");

  for (const width of WIDTHS) {
    it(`start band collapsed and expanded at ${width} columns`, async () => {
      const start = { ...START, completion: "exit" as const, timeoutMs: 420_000, failurePattern: "FAIL|Error", command: `cd app && ${WIDE} && npm test -- --reporter=dot` };
      const collapsed = band((w) => startBandLines(start, { width: w, expanded: false, expandKey: "ctrl+o", theme, highlight }), "toolPendingBg").render(width);
      const one = await shows(collapsed, width);
      expect(one.rows[0]?.trim()).toMatch(width < 32 ? /^\[started\]$/ : /^\[monitor\] started · run tests/);
      const expanded = band((w) => startBandLines(start, { width: w, expanded: true, expandKey: "ctrl+o", theme, highlight }), "toolPendingBg").render(width);
      const all = await shows(expanded, width);
      expect(all.rows.some((row) => row.trim().startsWith("Command"))).toBe(true);
    });

    for (const status of OUTCOMES) {
      it(`${status} result row at ${width} columns, collapsed and expanded`, async () => {
        const result = outcome(status);
        const bg = TONE_STYLE[resultTone(result)].bg;
        for (const expanded of [false, true]) {
          for (const inConsole of [true, false]) {
            const lines = band((w) => resultBandLines(result, { width: w, expanded, expandKey: "ctrl+o", theme, inConsole }), bg).render(width);
            const screen = await shows(lines, width);
            expect(screen.rows[0]?.trim().startsWith(width < 32 ? `[${status}]` : `[monitor] ${status}`)).toBe(true);
          }
        }
      });
    }

    it(`hostile descriptions, commands, captures and output in bands at ${width} columns`, async () => {
      const start = { ...START, description: HOSTILE, command: `${HOSTILE}\n${EACH_CONTROL.join("\n")}`, resultPattern: HOSTILE, failurePattern: HOSTILE };
      for (const expanded of [false, true]) {
        const lines = band((w) => startBandLines(start, { width: w, expanded, expandKey: "ctrl+o", theme, highlight }), "toolPendingBg").render(width);
        const screen = await shows(lines, width);
        expect(screen.escapes).toEqual([]);
        expect(screen.titles).toEqual([]);
      }
      for (const status of OUTCOMES) {
        const result = outcome(status, {
          description: HOSTILE,
          matched: HOSTILE,
          captures: { [`name${C0}`]: HOSTILE, ...Object.fromEntries(EACH_CONTROL.map((value, i) => [`c${i}`, value])) },
          output: [HOSTILE, ...EACH_CONTROL].map((text) => ({ source: "stderr" as const, text, count: 2, clipped: false })),
          reason: HOSTILE,
          resultParseError: HOSTILE,
        });
        for (const inConsole of [true, false]) {
          const lines = band((w) => resultBandLines(result, { width: w, expanded: true, expandKey: "ctrl+o", theme, inConsole }), TONE_STYLE[resultTone(result)].bg).render(width);
          const screen = await shows(lines, width);
          expect(screen.escapes).toEqual([]);
          expect(screen.titles).toEqual([]);
          if (width === 120 && !inConsole) {
            const text = screen.rows.map((row) => row.trim()).join("\n");
            for (const [i, char] of CONTROLS.entries()) {
              if (!INTRODUCERS.has(char)) expect(text).toContain(`Capture c${i} (escaped controls): ${EACH_CONTROL[i]?.replace(char, visibleEscape(char))}`);
            }
          }
        }
      }
    });
  }
});

describe("shell rows", () => {
  const highlight = (code: string) => highlightCode(code, "bash");

  for (const width of WIDTHS) {
    it(`running and exited rows, collapsed and expanded, at ${width} columns`, async () => {
      for (const result of [processResult({ cmd: `node -i ${WIDE}` }), exitedResult(0), exitedResult(1), exitedResult(0, { status: "timed_out", exit_code: null, signal: "SIGTERM" })]) {
        const bg = TONE_STYLE[shellTone(result)].bg;
        const collapsed = band((w) => processRowLines(result, { width: w, expanded: false, expandKey: "ctrl+o", theme, highlight }), bg).render(width);
        const one = await shows(collapsed, width);
        expect(one.rows[0]?.trim()).toMatch(width < 32 ? /^\[(running|exited \d|timed out)\]$/ : /^\[shell\] (running|exited \d|timed out) · /);
        expect(collapsed.length).toBeLessThanOrEqual(1 + 5);
        const expanded = band((w) => processRowLines(result, { width: w, expanded: true, expandKey: "ctrl+o", theme, highlight }), bg).render(width);
        const all = await shows(expanded, width);
        expect(all.rows.some((row) => row.trim().startsWith("Log path:"))).toBe(true);
      }
    });

    it(`list, set_on_exit, kill, wake and call rows at ${width} columns`, async () => {
      for (const expanded of [false, true]) {
        const o = { width, expanded, expandKey: "ctrl+o", theme, highlight };
        for (const build of [
          (w: number) => listRowLines(listResult(7), { ...o, width: w }),
          (w: number) => setOnExitRowLines(SET_ON_EXIT, { ...o, width: w }),
          (w: number) => killRowLines(killResult(), { ...o, width: w }),
          (w: number) => wakeRowLines(WAKE, { ...o, width: w }),
          (w: number) => callRowLines("exec_command", { cmd: `npm test ${WIDE}`, tty: true, timeout_seconds: 90 }, { ...o, width: w }),
        ]) {
          const lines = band(build, "toolPendingBg").render(width);
          const screen = await shows(lines, width);
          expect(screen.rows[0]?.trim().startsWith(width < 32 ? "[" : "[shell] ")).toBe(true);
        }
      }
    });

    it(`hostile commands and output are only text in shell rows at ${width} columns`, async () => {
      const output = `${HOSTILE}\n${EACH_CONTROL.join("\n")}`;
      for (const expanded of [false, true]) {
        const o = { width, expanded, expandKey: "ctrl+o", theme, highlight };
        const rows = [
          processRowLines(processResult({ cmd: HOSTILE, output, notes: [HOSTILE] }), o),
          processRowLines(exitedResult(1, { cmd: `${HOSTILE}\n${EACH_CONTROL.join("\n")}`, output, log_path: HOSTILE }), o),
          listRowLines({ ...listResult(2), sessions: listResult(2).sessions.map((s) => ({ ...s, cmd: HOSTILE, log_path: HOSTILE })) }, o),
          killRowLines(killResult({ cmd: HOSTILE, message: HOSTILE }), o),
          wakeRowLines({ ...WAKE, sessions: WAKE.sessions.map((s) => ({ ...s, cmd: HOSTILE, failure: HOSTILE })) }, o),
          callRowLines("write_stdin", { session_id: 1, chars: HOSTILE }, o),
        ];
        for (const lines of rows) await shows(band(() => lines, "toolErrorBg").render(width), width);
      }
    });
  }
});

describe("/monitor console", () => {
  const withResult = terminalResult({ monitorId: "monitor_4", status: "success", hasResult: true, result: { passed: 42 }, captures: { json: '{"passed":42}' } });
  const jobs = (): JobView[] => [
    monitorJob(1, null, { title: `dev server ${WIDE}` }),
    shellJob(2),
    monitorJob(3, failing, { config: [{ label: "Command", value: `set -e; ${"npm run step && ".repeat(30)}echo done`, layout: "code" }] }),
    monitorJob(4, withResult),
  ];
  const retained = (key: string): Record<string, JobView["output"]> => ({
    [key]: { lines: Array.from({ length: 60 }, (_, i) => ({ source: i % 5 ? ("stdout" as const) : ("stderr" as const), text: `GET /api/items/${i} 200 ${WIDE}` })), droppedLines: 40, droppedBytes: 4096 },
  });

  for (const width of WIDTHS) {
    it(`list and details fill a 24-row terminal exactly at ${width} columns`, async () => {
      const console_ = consoleOf(snapshotOf(jobs()), 24);
      const screen = await shows(console_.render(width), width, { rows: 24 });
      expect(screen.rows[0]).toMatch(width >= 40 ? /^Jobs · 2 running · 2 finished$/ : /^Jobs · 2 running/);
      expect(screen.rows[1]).toMatch(/^▸ running/);
      expect(screen.rows[23]).toMatch(/\? help$/);
      // Down to the failed monitor: its verdict comes first in the details.
      console_.handleInput("\u001b[B");
      console_.handleInput("\u001b[B");
      const failed = await shows(console_.render(width), width, { rows: 24 });
      expect(failed.rows.some((row) => row.startsWith("Status: failure"))).toBe(true);
    });

    it(`output shown after Enter, scrolled to its end, at ${width} columns`, async () => {
      const console_ = consoleOf(snapshotOf(jobs()), 24, retained("monitor:monitor_1"));
      console_.handleInput("\r");
      console_.handleInput("\u001b[F");
      const screen = await shows(console_.render(width), width, { rows: 24 });
      if (width >= 40) expect(screen.rows[22]).toMatch(/^\[stdout\] GET \/api\/items\/59 200/);
      expect(screen.rows.some((row) => row.startsWith("[std"))).toBe(true);
    });

    it(`help page at ${width} columns`, async () => {
      const console_ = consoleOf(snapshotOf(jobs()), 24);
      console_.handleInput("?");
      const screen = await shows(console_.render(width), width, { rows: 24 });
      expect(screen.rows[0]).toMatch(/^Help/);
      expect(screen.rows.slice(1, 23).join("\n")).toContain(width >= 80 ? "Up/Down        select a job" : "Up/Down");
    });

    it(`twelve jobs in a six-row terminal at ${width} columns`, async () => {
      const twelve = Array.from({ length: 12 }, (_, i) => monitorJob(i + 1, i < 6 ? null : failing, { title: `job ${i + 1} ${"long description ".repeat(5)}` }));
      const screen = await shows(consoleOf(snapshotOf(twelve), 6).render(width), width, { rows: 6 });
      expect(screen.rows[1]).toMatch(/^▸ running/);
      expect(screen.rows[5]).toMatch(/\? help$/);
    });

    it(`24 KiB JSON: preview, then v and End reach the complete value's tail, at ${width} columns`, async () => {
      const value = bigJson(24 * 1024);
      const json = JSON.stringify(value);
      const snapshot = snapshotOf([monitorJob(1, terminalResult({ hasResult: true, result: value }))]);
      const console_ = consoleOf(snapshot, 40);
      const previews = await shows(console_.render(width), width, { rows: 40 });
      expect(previews.rows.join("")).not.toContain(json.slice(-30));
      console_.handleInput("v");
      console_.handleInput("\u001b[F");
      const tail = await shows(console_.render(width), width, { rows: 40 });
      expect(tail.rows.slice(1, -1).join("")).toContain(json.slice(-30));
    });

    it(`hostile titles, output, captures, commands and notices are only text at ${width} columns`, async () => {
      const result = terminalResult({
        status: "failure",
        description: HOSTILE,
        matched: HOSTILE,
        captures: { [`name${C0}`]: HOSTILE, ...Object.fromEntries(EACH_CONTROL.map((value, i) => [`c${i}`, value])) },
        output: [{ source: "stderr", text: HOSTILE, count: 2, clipped: false }],
        reason: HOSTILE,
        exitCode: 1,
      });
      const monitor = monitorJob(1, result, { title: HOSTILE, config: [{ label: "Command", value: `${HOSTILE}\n${EACH_CONTROL.join("\n")}`, layout: "code" }] });
      const shell = shellJob(2, { title: HOSTILE });
      const output = { lines: [HOSTILE, ...EACH_CONTROL].map((text) => ({ source: "stdout" as const, text })), droppedLines: 0, droppedBytes: 0 };
      const snapshot = snapshotOf([monitor, shell]);
      const source = { ...sourceOf(snapshot, { "monitor:monitor_1": output, "shell:2": output }), stop: async () => HOSTILE };
      const console_ = new MonitorConsole({ source, host: { requestRender: () => {}, rows: () => 400 }, theme, keys: NO_KEYS, onClose: () => {}, highlight: (code) => highlightCode(code, "bash") });
      console_.handleInput("\r");
      console_.handleInput("v");
      const screens = [await shows(console_.render(width), width, { rows: 400 })];
      console_.handleInput("\u001b[B");
      screens.push(await shows(console_.render(width), width, { rows: 400 }));
      // x: the answer to the stop (hostile here) becomes the footer notice.
      console_.handleInput("x");
      await settled();
      const answered = await shows(console_.render(width), width, { rows: 400 });
      expect(answered.rows[399]).toMatch(/^start /);
      screens.push(answered);
      console_.handleInput("?");
      screens.push(await shows(console_.render(width), width, { rows: 400 }));
      for (const screen of screens) {
        expect(screen.escapes).toEqual([]);
        expect(screen.titles).toEqual([]);
      }
      if (width === 120) {
        const text = screens[0]?.rows.join("\n") ?? "";
        for (const [i, char] of CONTROLS.entries()) {
          if (INTRODUCERS.has(char)) continue;
          expect(text).toContain(`[stdout] ${EACH_CONTROL[i]?.replace(char, visibleEscape(char))}`);
        }
      }
    });
  }
});

describe("sessions picker", () => {
  const shells = (): JobView[] => [
    shellJob(1, { title: `npm run dev ${WIDE}`, output: undefined }),
    shellJob(2, { running: false, status: "exited", tone: "error", head: [{ label: "Exit code", value: "1", layout: "inline" }] }),
  ];
  const tail = { lines: Array.from({ length: 30 }, (_, i) => ({ source: "pty" as const, text: `tick ${i} ${WIDE}` })), droppedLines: 0, droppedBytes: 0 };
  const pickerOf = (snapshot: JobsSnapshot, rows: number, source: ConsoleSource) =>
    new SessionsPicker({ source, host: { requestRender: () => {}, rows: () => rows }, theme, keys: NO_KEYS, onClose: () => {} });

  for (const width of WIDTHS) {
    it(`list, state and output tail fill a 24-row terminal at ${width} columns`, async () => {
      const snapshot = snapshotOf(shells());
      const picker = pickerOf(snapshot, 24, sourceOf(snapshot, { "shell:1": tail }));
      const screen = await shows(picker.render(width), width, { rows: 24 });
      expect(screen.rows[0]).toMatch(/^Shell jobs/);
      expect(screen.rows[1]).toMatch(/^▸ running/);
      if (width >= 40) expect(screen.rows[22]).toMatch(/^\[pty\] tick 29/);
      picker.handleInput("x");
      const confirm = await shows(picker.render(width), width, { rows: 24 });
      expect(confirm.rows[23]).toMatch(/^Stop /);
    });

    it(`hostile commands, output and answers are only text at ${width} columns`, async () => {
      const output = { lines: [HOSTILE, ...EACH_CONTROL].map((text) => ({ source: "pty" as const, text })), droppedLines: 0, droppedBytes: 0 };
      const snapshot = snapshotOf([shellJob(1, { title: HOSTILE, config: [{ label: "Command", value: HOSTILE, layout: "code" }] }), shellJob(2, { title: HOSTILE })]);
      const source = { ...sourceOf(snapshot, { "shell:1": output }), stop: async () => HOSTILE };
      const picker = pickerOf(snapshot, 120, source);
      const screens = [await shows(picker.render(width), width, { rows: 120 })];
      picker.handleInput("x");
      picker.handleInput("y");
      await settled();
      const answered = await shows(picker.render(width), width, { rows: 120 });
      expect(answered.rows[119]).toMatch(/^start /);
      screens.push(answered);
      for (const screen of screens) {
        expect(screen.escapes).toEqual([]);
        expect(screen.titles).toEqual([]);
      }
    });
  }
});

describe("24 KiB JSON in the transcript", () => {
  const value = bigJson(24 * 1024);
  const json = JSON.stringify(value);
  const result = terminalResult({ hasResult: true, result: value, captures: { json } });
  const bandAt = (width: number, inConsole: boolean) =>
    new Band((w) => resultBandLines(result, { width: w, expanded: true, expandKey: "ctrl+o", theme, inConsole }), "toolSuccessBg", theme).render(width);

  for (const width of WIDTHS) {
    it(`a preview while /monitor has the run, every character after a restore, at ${width} columns`, async () => {
      const preview = await shows(bandAt(width, true), width);
      const previewText = preview.rows.map((row) => row.trim()).join(" ");
      expect(previewText).not.toContain(json.slice(-30));
      if (width >= 80) {
        expect(preview.usedRows).toBeLessThanOrEqual(11);
        expect(previewText).toContain(`preview of ${json.length.toLocaleString("en-US")} characters · /monitor: v full values`);
      }
      const full = await shows(bandAt(width, false), width);
      const rows = full.rows.map((row) => row.trim());
      const body = rows.slice(rows.findIndex((row) => row.startsWith("Result:"))).join("").replace(/^Result:\s?/, "");
      expect(body.startsWith(json)).toBe(true);
    });
  }
});

describe("metrics footer", () => {
  const style = (): FooterStyle => footerStyle(theme);

  for (const width of WIDTHS) {
    it(`expanded and collapsed at ${width} columns, the button in the cells it reports`, async () => {
      for (const cwd of ["~/project", `~/项目/${"很长的目录/".repeat(8)}😀end`]) {
        for (const collapsed of [false, true]) {
          const layout = renderFooter(footerModel({ cwd, collapsed }), width, style());
          const screen = await shows(layout.lines, width);
          expect(screen.usedRows).toBe(collapsed ? 1 : 3);
          // A click is matched against these columns, so the terminal must have drawn the button exactly there.
          const button = layout.button;
          expect(button).not.toBeNull();
          if (button === null) continue;
          const label = screen.cells[0]?.slice(button.start, button.end).join("");
          expect(label).toBe(width >= 60 ? (collapsed ? "[▸ Expand]" : "[▾ Collapse]") : collapsed ? "[▸]" : "[▾]");
        }
      }
    });

    it(`a hostile cwd, branch, session name and model are only text at ${width} columns`, async () => {
      for (const collapsed of [false, true]) {
        const model = footerModel({
          cwd: `~/dir${HOSTILE}`,
          gitBranch: `main${HOSTILE}`,
          sessionName: `name${HOSTILE}`,
          model: `provider/model${HOSTILE}`,
          collapsed,
        });
        const screen = await shows(renderFooter(model, width, style()).lines, width);
        expect(screen.escapes).toEqual([]);
        expect(screen.titles).toEqual([]);
        expect(screen.usedRows).toBe(collapsed ? 1 : 3);
      }
    });

    it(`statuses of other extensions, sanitized as the footer slot does, are only text at ${width} columns`, async () => {
      // One status at a time, so none is dropped for room; bidi controls and lone surrogates included.
      const statuses = [HOSTILE, ...EACH_CONTROL];
      for (const text of statuses) {
        for (const collapsed of [false, true]) {
          const screen = await shows(renderFooter(footerModel({ statuses: [{ key: "ext", text: sanitizeStatus(text) }], collapsed }), width, style()).lines, width);
          expect(screen.escapes).toEqual([]);
          expect(screen.titles).toEqual([]);
        }
      }
    });
  }
});

describe("wide text", () => {
  // Values whose wide cells land on every parity of wrap point: CJK, emoji, fullwidth forms, combining marks.
  const values = ["構築😀".repeat(40), `x${"日本".repeat(30)}`, `ab ${"ＡＢ".repeat(20)} c d ${"😀".repeat(30)}`, "e\u0301".repeat(100)];

  for (const width of WIDTHS) {
    it(`wraps without splitting a wide cell in captures, output tails and commands at ${width} columns`, async () => {
      const result = outcome("failure", {
        captures: Object.fromEntries(values.map((value, i) => [`w${i}`, value])),
        output: values.map((text) => ({ source: "stdout" as const, text, count: 1, clipped: false })),
      });
      await shows(band((w) => resultBandLines(result, { width: w, expanded: true, expandKey: "", theme, inConsole: false }), "toolErrorBg").render(width), width);
      const start = { ...START, command: values.join("\n") };
      await shows(band((w) => startBandLines(start, { width: w, expanded: true, expandKey: "", theme, highlight: (code) => highlightCode(code, "bash") }), "toolPendingBg").render(width), width);
      const job = monitorJob(1, result, { title: values[0] as string });
      const console_ = consoleOf(snapshotOf([job]), 200, { "monitor:monitor_1": { lines: values.map((text) => ({ source: "stdout" as const, text })), droppedLines: 0, droppedBytes: 0 } });
      console_.handleInput("\r");
      console_.handleInput("v");
      await shows(console_.render(width), width, { rows: 200 });
    });
  }
});

describe("regressions", () => {
  it("a lone surrogate in a description no longer wraps a full-width row (the terminal draws U+FFFD in a cell pi-tui did not count)", async () => {
    const title = `${"z".repeat(10)}\ud800${"w".repeat(60)}`;
    const activity = await shows(renderActivity([{ kind: "monitor", title, elapsedMs: 1 }], { width: 40, terminalRows: 24, nowMs: 0, theme }), 40);
    expect(activity.rows[0]).toMatch(/^⠋ monitor · z{10}\\ud800w+…$/);
    const heading = band((w) => resultBandLines(terminalResult({ description: title }), { width: w, expanded: false, expandKey: "", theme, inConsole: true }), "toolSuccessBg");
    await shows(heading.render(40), 40);
    await shows(consoleOf(snapshotOf([monitorJob(1, null, { title })]), 8).render(40), 40, { rows: 8 });
  });
});

describe("paint writes frames the way pi-tui's renderer does", () => {
  const overlay = { anchor: "top-left" as const, width: "100%" as const, maxHeight: "100%" as const };
  const transcript = (width: number) => Array.from({ length: 40 }, (_, i) => `transcript ${i} ${"#".repeat(width)}`.slice(0, width));

  for (const width of WIDTHS) {
    it(`the console and the picker as Pi opens them (a full-size overlay), rows and bands as children, at ${width} columns`, async () => {
      const output = { lines: [HOSTILE, ...EACH_CONTROL].map((text) => ({ source: "stdout" as const, text })), droppedLines: 0, droppedBytes: 0 };
      const snapshot = snapshotOf([monitorJob(1, failing, { title: `${WIDE} ${HOSTILE}` }), shellJob(2, { title: HOSTILE })]);
      const console_ = consoleOf(snapshot, 24, { "monitor:monitor_1": output });
      console_.handleInput("\r");
      const picker = new SessionsPicker({ source: sourceOf(snapshot, { "shell:2": output }), host: { requestRender: () => {}, rows: () => 24 }, theme, keys: NO_KEYS, onClose: () => {} });
      for (const component of [console_, picker]) {
        const painted = await shows(component.render(width), width, { rows: 24 });
        const real = await renderWithPiTui(component, width, 24, { overlay, base: transcript(width) });
        // The compositor pads overlay rows with spaces to the full width.
        expect(real.map((row) => row.trimEnd())).toEqual(painted.rows.map((row) => row.trimEnd()));
      }
      const children = [
        { render: (w: number) => renderActivity([{ kind: "monitor", title: HOSTILE, elapsedMs: 5 }, { kind: "shell", title: WIDE, elapsedMs: 5 }], { width: w, terminalRows: 24, nowMs: 0, theme }), invalidate: () => {} },
        band((w) => resultBandLines(outcome("failure", { description: HOSTILE }), { width: w, expanded: true, expandKey: "ctrl+o", theme, inConsole: false }), "toolErrorBg"),
      ];
      for (const component of children) {
        const lines = component.render(width);
        const painted = await shows(lines, width, { rows: 24 });
        expect(await renderWithPiTui(component, width, 24)).toEqual(painted.rows);
      }
    });
  }
});
