/**
 * `npm run bench:render`: what rendering model-facing output costs. Per MiB: the time to feed and take a job's output
 * through the terminal emulator (a PTY job) and through the pipe text path, next to today's raw path (head+tail
 * accumulator, then escaping) measured in the same run. Per job: the memory one terminal emulator keeps, with 64 of
 * them alive after each rendered 256 KiB. Medians of several runs; the machine may be shared, so read ratios first.
 *
 * Runs itself in a child `node --expose-gc` so the heap can be collected before each memory reading.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { pipeText } from "../actors/output/pipe-text.ts";
import { TerminalText } from "../actors/output/terminal-text.ts";
import { OUTPUT_HEAD_BYTES, OUTPUT_TAIL_BYTES } from "../host/shell/limits.ts";
import { UnreadOutput } from "../actors/output/unread.ts";
import { escapeControls } from "../host/safety/escape.ts";

const MIB = 1024 * 1024;
const RUNS = 7;
const CHUNK = 16 * 1024;
const encoder = new TextEncoder();

function workload(kind: "plain" | "coloured" | "progress"): Uint8Array {
  let text = "";
  for (let i = 0; text.length < MIB; i += 1) {
    if (kind === "plain") text += `check ${String(i).padStart(6, "0")}: src/module_${(i * 7919) % 10_007}.ts verified in ${(i * 37) % 900}ms\r\n`;
    else if (kind === "coloured") text += ` \u001b[32m✓\u001b[39m tests/unit/case_${i}.test.ts \u001b[2m(${i % 40} tests)\u001b[22m \u001b[33m${(i * 13) % 900}ms\u001b[39m\r\n`;
    else text += `\r\u001b[36m[${"#".repeat(i % 40).padEnd(40)}]\u001b[0m ${i % 100}% fetch package-${i}`;
  }
  return encoder.encode(text).subarray(0, MIB);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Milliseconds to feed 1 MiB in 16 KiB batches with a read every 64 batches, as a polling model would. */
function time(feed: (chunk: Uint8Array) => void, take: () => void, bytes: Uint8Array): number {
  const start = performance.now();
  for (let at = 0, n = 0; at < bytes.length; at += CHUNK, n += 1) {
    feed(bytes.subarray(at, at + CHUNK));
    if (n % 64 === 63) take();
  }
  take();
  return performance.now() - start;
}

function costs(): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const kind of ["plain", "coloured", "progress"] as const) {
    const bytes = workload(kind);
    const raw: number[] = [];
    const pipe: number[] = [];
    const terminal: number[] = [];
    for (let run = 0; run < RUNS; run += 1) {
      const a = new UnreadOutput(OUTPUT_HEAD_BYTES, OUTPUT_TAIL_BYTES);
      raw.push(time((c) => a.feed("stdout", c), () => void escapeControls(a.take(false).text), bytes));
      const b = new UnreadOutput(OUTPUT_HEAD_BYTES, OUTPUT_TAIL_BYTES);
      pipe.push(time((c) => b.feed("stdout", c), () => void escapeControls(pipeText(b.take(false).text)), bytes));
      const t = new TerminalText({ cols: 120, rows: 30, headBytes: OUTPUT_HEAD_BYTES, tailBytes: OUTPUT_TAIL_BYTES });
      terminal.push(time((c) => t.feed(c), () => void t.take(), bytes));
      t.dispose();
    }
    out[kind] = { raw: median(raw), pipe: median(pipe), terminal: median(terminal) };
  }
  return out;
}

function heap(): number {
  (globalThis as { gc?: () => void }).gc?.();
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.external + m.arrayBuffers;
}

function memory(): { perJobBytes: number; jobs: number } {
  const jobs = 64;
  // One emulator first, so the module's own code and first-use caches are not counted per job.
  new TerminalText({ cols: 120, rows: 30, headBytes: OUTPUT_HEAD_BYTES, tailBytes: OUTPUT_TAIL_BYTES }).dispose();
  const bytes = workload("coloured").subarray(0, 256 * 1024);
  const before = heap();
  const alive: TerminalText[] = [];
  for (let i = 0; i < jobs; i += 1) {
    const t = new TerminalText({ cols: 120, rows: 30, headBytes: OUTPUT_HEAD_BYTES, tailBytes: OUTPUT_TAIL_BYTES });
    for (let at = 0; at < bytes.length; at += CHUNK) t.feed(bytes.subarray(at, at + CHUNK));
    t.take();
    alive.push(t);
  }
  const after = heap();
  if (alive.length !== jobs) throw new Error("unreachable");
  return { perJobBytes: Math.round((after - before) / jobs), jobs };
}

if (process.argv.includes("--child")) {
  process.stdout.write(JSON.stringify({ costs: costs(), memory: memory() }));
} else {
  const child = spawnSync(process.execPath, ["--expose-gc", fileURLToPath(import.meta.url), "--child"], { encoding: "utf8" });
  if (child.status !== 0) throw new Error(`render bench failed: ${child.stderr}`);
  const result = JSON.parse(child.stdout) as ReturnType<typeof costs> extends infer C ? { costs: C; memory: ReturnType<typeof memory> } : never;
  const lines = ["| 1 MiB of | raw (today) ms | pipe text ms | terminal ms | terminal ÷ raw |", "|---|---:|---:|---:|---:|"];
  for (const [kind, c] of Object.entries(result.costs)) {
    lines.push(`| ${kind} | ${c.raw!.toFixed(1)} | ${c.pipe!.toFixed(1)} | ${c.terminal!.toFixed(1)} | ${(c.terminal! / c.raw!).toFixed(1)}× |`);
  }
  lines.push("", `Memory per terminal emulator (${result.memory.jobs} alive, 120×30, after 256 KiB each): ${(result.memory.perJobBytes / 1024).toFixed(0)} KiB`);
  process.stdout.write(`${lines.join("\n")}\n`);
}
