/**
 * Shell-job workloads for `npm run tokens`: the bytes real programs write (the REPL exchange recorded from `node -i`
 * in a 120×30 PTY, the others built to the shape such programs emit), and each one's model-facing output before
 * (the raw head+tail with controls escaped, as every read was until output was rendered) and after (rendered: the
 * terminal emulator for a PTY, pipe text for pipes). Both go through the same final escaping the tool result uses.
 */
import { createOutputText } from "../actors/output/read-text.ts";
import { UnreadOutput } from "../actors/output/unread.ts";
import { OUTPUT_HEAD_BYTES, OUTPUT_TAIL_BYTES } from "../host/shell/limits.ts";
import { escapeControls } from "../host/safety/escape.ts";

export interface ShellWorkload {
  name: string;
  tty: boolean;
  /** The bytes between two reads, one entry per read. */
  reads: string[];
}

const csi = (code: string): string => `\u001b[${code}`;
const colour = (code: number, text: string): string => `${csi(`${code}m`)}${text}${csi("39m")}`;

// Recorded: `node -i` (Node 22.23) in a PTY; the first read, then `[1, 2, 3].map((x) => x * 7)`, then `.exit`.
const repl = [
  'Welcome to Node.js v22.23.3.\r\nType ".help" for more information.\r\n\u001b[1G\u001b[0J> \u001b[3G',
  "[1, 2, 3].map((x) => x * 7)\r\r\n[ \u001b[33m7\u001b[39m, \u001b[33m14\u001b[39m, \u001b[33m21\u001b[39m ]\r\n\u001b[1G\u001b[0J> \u001b[3G",
  ".exit\r\r\n",
];

function progressBar(): string {
  let out = "";
  for (let i = 1; i <= 100; i += 1) {
    const filled = Math.floor(i / 5);
    out += `\r${csi("2K")}${colour(36, "⸨" + "#".repeat(filled) + "░".repeat(20 - filled) + "⸩")} ⠋ reify:pkg-${i}: ${csi("2m")}timing reifyNode:node_modules/pkg-${i} Completed in ${i * 3}ms${csi("22m")}`;
  }
  return `${out}\r${csi("2K")}\r\nadded 100 packages, and audited 101 packages in 3s\r\n\r\nfound ${colour(32, "0")} vulnerabilities\r\n`;
}

function vitest(newline: string): string {
  const lines = [`\n ${csi("1m")}${csi("46m")} RUN ${csi("49m")}${csi("22m")} ${colour(36, "v5.1.2")} ${csi("90m")}/work/app${csi("39m")}\n`];
  for (let i = 0; i < 30; i += 1) {
    lines.push(` ${colour(32, "✓")} tests/unit/module-${i}.test.ts ${csi("2m")}(${(i % 9) + 1} tests)${csi("22m")} ${colour(33, `${(i * 37) % 400}ms`)}`);
  }
  lines.push(
    ` ${colour(31, "❯")} tests/unit/parser.test.ts ${csi("2m")}(4 tests | ${csi("22m")}${colour(31, "1 failed")}${csi("2m")})${csi("22m")}`,
    `   ${colour(31, "×")} parses nested arrays`,
    "",
    `${csi("31m")}${csi("1m")}AssertionError${csi("22m")}: expected [ 1, [ 2 ] ] to deeply equal [ 1, [ 2, 3 ] ]${csi("39m")}`,
    "",
    ` ${csi("2m")}Test Files ${csi("22m")} ${csi("1m")}${colour(31, "1 failed")}${csi("22m")}${csi("2m")} | ${csi("22m")}${csi("1m")}${colour(32, "30 passed")}${csi("22m")}${csi("90m")} (31)${csi("39m")}`,
  );
  return lines.join(newline) + newline;
}

function pytest(newline: string): string {
  const lines = [`${csi("1m")}============================= test session starts ==============================${csi("0m")}`, "platform linux -- Python 3.12.3, pytest-8.3.2", "collected 120 items", ""];
  for (let i = 0; i < 12; i += 1) lines.push(`tests/test_module_${i}.py ${colour(32, "..........")}${colour(32, `${csi("1m")}`)}${" ".repeat(40)}${colour(32, `[ ${String((i + 1) * 8).padStart(3)}%]`)}`);
  lines.push(`${colour(31, "F")}`, "", `${csi("31m")}${csi("1m")}___________________________ test_parse_nested ___________________________${csi("0m")}`, "", `${csi("1m")}${csi("31mE       assert [1, [2]] == [1, [2, 3]]")}${csi("0m")}`, `${csi("31m")}========================= ${csi("1m")}1 failed${csi("0m")}, ${csi("32m")}119 passed${csi("0m")}${csi("31m")} in 2.31s =========================${csi("0m")}`);
  return lines.join(newline) + newline;
}

/** A `top`-like screen: cleared, drawn by cursor position, bold header and a reverse-video column row, refreshed twice. */
function topScreen(): string {
  const frame = (tick: number): string => {
    let out = `${csi("H")}${csi("2J")}`;
    out += `${csi("1;1H")}top - 10:00:0${tick} up 3 days,  2 users,  load average: 1.${tick}2, 0.98, 0.75${csi("K")}`;
    out += `${csi("2;1H")}Tasks: ${csi("1m")}214${csi("22m")} total,   ${csi("1m")}${tick}${csi("22m")} running, ${csi("1m")}213${csi("22m")} sleeping${csi("K")}`;
    out += `${csi("3;1H")}%Cpu(s): ${csi("1m")} 12.${tick}${csi("22m")} us,  3.1 sy,  0.0 ni, 84.2 id${csi("K")}`;
    out += `${csi("5;1H")}${csi("7m")}    PID USER      PR  NI    VIRT    RES  %CPU  %MEM     TIME+ COMMAND${" ".repeat(40)}${csi("27m")}`;
    for (let i = 0; i < 20; i += 1) {
      out += `${csi(`${6 + i};1H`)}${String(1000 + i * 17).padStart(7)} dev       20   0 ${String(100_000 + i * 997).padStart(7)} ${String(20_000 + i * 311).padStart(6)} ${((i * 7 + tick) % 50 / 10).toFixed(1).padStart(5)}   0.${i % 10}   0:0${i % 10}.${tick}2 ${i === 0 ? `${csi("1m")}node${csi("22m")}` : `worker-${i}`}${csi("K")}`;
    }
    return out;
  };
  return frame(1) + frame(2);
}

export const SHELL_WORKLOADS: ShellWorkload[] = [
  { name: "REPL exchange (`node -i`, PTY, 3 reads)", tty: true, reads: repl },
  { name: "npm install-style progress bar, 100 `\\r` updates (PTY)", tty: true, reads: [progressBar()] },
  { name: "progress bar, 100 `\\r` updates (pipe)", tty: false, reads: [progressBar().replaceAll("\r\n", "\n")] },
  { name: "coloured vitest run (PTY)", tty: true, reads: [vitest("\r\n")] },
  { name: "coloured vitest run (pipe, FORCE_COLOR)", tty: false, reads: [vitest("\n")] },
  { name: "coloured pytest run (PTY)", tty: true, reads: [pytest("\r\n")] },
  { name: "`top`-like screen, two refreshes (PTY)", tty: true, reads: [topScreen()] },
];

const encoder = new TextEncoder();

/** The output text of each read as the model got it before output was rendered. */
export function rawReads(workload: ShellWorkload): string[] {
  const unread = new UnreadOutput(OUTPUT_HEAD_BYTES, OUTPUT_TAIL_BYTES);
  return workload.reads.map((bytes) => {
    unread.feed("stdout", encoder.encode(bytes));
    return escapeControls(unread.take(false).text);
  });
}

/** The output text of each read as the model gets it now. */
export async function renderedReads(workload: ShellWorkload): Promise<string[]> {
  const io = workload.tty ? ({ kind: "pty", cols: 120, rows: 30 } as const) : ({ kind: "pipes", stdin: false } as const);
  const output = await createOutputText(io, { headBytes: OUTPUT_HEAD_BYTES, tailBytes: OUTPUT_TAIL_BYTES });
  return workload.reads.map((bytes) => {
    output.feed(workload.tty ? "pty" : "stdout", encoder.encode(bytes));
    return escapeControls(output.take(false).text);
  });
}
