/**
 * Real tools, facts and tokens: each workload of tests/fixtures/real-tools.ts run for real through each way its result
 * reaches the model (exec_command to its end, monitor_start with a result the run never prints, exec_command in the
 * background collected by wait_jobs; tests/integration/real-tool-paths.ts), with the cl100k tokens of the
 * model-facing text and the facts it misses. Two baselines beside them: the raw output as printed on pipes, and what
 * a bash tool keeps of it (the last 2,000 lines or 50 KB, whichever is less, as Pi's bash tool truncates).
 *
 * For `npm run tokens` (bench/tokens.ts). `node bench/real-tools.ts` prints the rows as JSON; with `--dump DIR` it
 * also writes each text it counted to DIR, to read what the model got.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { closeRuntime, installedRuntime } from "../tests/fixtures/jobs.ts";
import { commandLine, escapesIn, missingFacts, prepareWorkloads, REAL_TOOL_WORKLOADS, workdir, type RealToolWorkload } from "../tests/fixtures/real-tools.ts";
import { realToolPaths, type ToolPath } from "../tests/integration/real-tool-paths.ts";
import { tokens } from "./token-count.ts";

export const MEASURED_PATHS = ["exec_command", "monitor_start", "wait_jobs"] as const satisfies readonly ToolPath[];
export type MeasuredPath = (typeof MEASURED_PATHS)[number];

export interface TextFigures {
  tokens: number;
  /** The facts the text lacks (tests/fixtures/real-tools.ts `missingFacts`). */
  missing: string[];
  /** Escape characters, or escapings of them, in the text. */
  escapes: boolean;
}

export interface RealToolRow {
  name: string;
  facts: number;
  rawLines: number;
  raw: TextFigures;
  bashTail: TextFigures;
  paths: Record<MeasuredPath, TextFigures>;
}

const BASH_LINES = 2_000;
const BASH_BYTES = 50 * 1024;

/** The output as a bash tool keeps it: the last 2,000 lines, then within them the last 50 KB of whole lines. */
export function bashTail(output: string): string {
  let lines = output.split("\n").slice(-BASH_LINES);
  while (lines.length > 1 && Buffer.byteLength(lines.join("\n")) > BASH_BYTES) lines = lines.slice(1);
  return lines.join("\n");
}

/** The workload run on pipes, stderr into stdout, as printed. */
function rawOutput(root: string, w: RealToolWorkload): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", `${commandLine(w)} 2>&1`], { cwd: workdir(root, w), stdio: ["ignore", "pipe", "inherit"] });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== w.expectExit) reject(new Error(`${w.name}: exited ${code}, expected ${w.expectExit}`));
      else resolve(Buffer.concat(chunks).toString("utf8"));
    });
  });
}

const figures = (w: RealToolWorkload, text: string): TextFigures => ({ tokens: tokens(text), missing: missingFacts(w, text), escapes: escapesIn(text).length > 0 });

export async function realToolRows(options: { dump?: string } = {}): Promise<RealToolRow[]> {
  const root = mkdtempSync(join(tmpdir(), "pi-jobs-bench-real-tools-"));
  const runtime = installedRuntime({ warm: 2 });
  const paths = realToolPaths(runtime, root);
  const dump = (w: RealToolWorkload, kind: string, text: string): void => {
    if (options.dump === undefined) return;
    mkdirSync(options.dump, { recursive: true });
    writeFileSync(join(options.dump, `${w.cwd}.${kind.replace(/\W+/g, "-")}.txt`), text);
  };
  try {
    await prepareWorkloads(root);
    const rows: RealToolRow[] = [];
    for (const w of REAL_TOOL_WORKLOADS) {
      const raw = await rawOutput(root, w);
      const tail = bashTail(raw);
      dump(w, "raw", raw);
      dump(w, "bash-tail", tail);
      const measured = {} as Record<MeasuredPath, TextFigures>;
      for (const path of MEASURED_PATHS) {
        const run = await paths.run(path, w);
        if (run.exitCode !== w.expectExit) throw new Error(`${w.name} (${path}): exit ${run.exitCode}, expected ${w.expectExit}`);
        dump(w, path, run.text);
        measured[path] = figures(w, run.text);
      }
      rows.push({ name: w.name, facts: w.facts.length + (w.count === undefined ? 0 : 1), rawLines: raw.split("\n").length - 1, raw: figures(w, raw), bashTail: figures(w, tail), paths: measured });
    }
    return rows;
  } finally {
    await paths.close();
    await closeRuntime(runtime);
    rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }
}

const fmt = (value: number): string => value.toLocaleString("en-US");

/** One cell: tokens, and the facts missing out of all (with `esc` when escape sequences came through). */
const cell = (f: TextFigures, of: number): string => `${fmt(f.tokens)} · ${f.missing.length === 0 ? "all facts" : `**${f.missing.length}/${of} missing**`}${f.escapes ? " · **esc**" : ""}`;

/** A fact as inline code; one holding a backtick goes between double ones. */
const code = (text: string): string => (text.includes("`") ? `\`\` ${text} \`\`` : `\`${text}\``);

/** The section of docs/tokens.md: the table, then each missing fact named. */
export function realToolsMarkdown(rows: readonly RealToolRow[]): string[] {
  const missingLines = rows.flatMap((row) =>
    (["bashTail", ...MEASURED_PATHS] as const).flatMap((path) => {
      const f = path === "bashTail" ? row.bashTail : row.paths[path];
      return f.missing.length === 0 ? [] : [`- ${row.name}, ${path === "bashTail" ? "bash tail" : path}: ${f.missing.map(code).join(", ")}`];
    }),
  );
  return [
    "## Real tools: facts and tokens",
    "",
    "Real tools run over generated projects with planted failures (`tests/fixtures/real-tools.ts`; the synthetic",
    "row is one compiler-error shape, 10,000 times), through each way the result reaches the model",
    "(`bench/real-tools.ts`): the tokens of the model-facing text and how many of the facts a developer needs",
    "(failing test ids, `file:line`, the message, the summary) it lacks. Baselines: the raw output as printed on",
    "pipes, and what a bash tool keeps of it (the last 2,000 lines or 50 KB). `esc`: escape sequences reached the",
    "text. exec_command runs the command to its end; monitor_start is told to expect a result the run never prints",
    "(`completion: \"exit\"`); wait_jobs counts the background start's text and the one wait's.",
    "",
    "| Workload | Lines | Raw | bash tail | exec_command | monitor_start | wait_jobs |",
    "|---|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      (row) =>
        `| ${row.name} | ${fmt(row.rawLines)} | ${fmt(row.raw.tokens)} | ${cell(row.bashTail, row.facts)} | ` +
        MEASURED_PATHS.map((path) => cell(row.paths[path], row.facts)).join(" | ") +
        " |",
    ),
    "",
    ...(missingLines.length === 0 ? ["Every fact is in every text."] : ["Facts missing:", "", ...missingLines]),
    "",
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const at = process.argv.indexOf("--dump");
  const rows = await realToolRows(at > 0 ? { dump: process.argv[at + 1] } : {});
  process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
}
