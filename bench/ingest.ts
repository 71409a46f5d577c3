/**
 * Ingest: how long `seq 1 2000000` (2 M lines, 14.9 MB) takes end to end through one job actor, beside the same
 * command with nothing reading it and with Node's main thread reading it through a pipe.
 *
 * A job's time runs from `start()` to its terminal result on the host: spawn on a warm thread, every byte read,
 * logged, batched and handed to the host, the group confirmed gone and the exit reported. The monitor variant also
 * frames every line and tests it against a pattern that never matches.
 *
 * The four variants are interleaved, one run of each per round, so that load from elsewhere on the machine falls
 * on all of them alike. Beside wall time each run records the CPU time this process spent (host and actor threads;
 * the command's own CPU is not in it), which a busy machine disturbs much less than wall time.
 */
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import type { SupervisedRuntime } from "../host/runtime/runtime.ts";
import { installedRuntime, closeRuntime, jobRequest, monitorRequest, ms, round, sleep, summarize, type Row, type Summary } from "./shared.ts";

const LINES = 2_000_000;
const COMMAND = `seq 1 ${LINES}`;
const ROUNDS = 12;
const WARMUP_ROUNDS = 2;
export const INGEST_TARGET_RATIO = 1.5;
/**
 * The same ratio against the main thread's bare pipe read: reading a pipe at all costs about twice what the command
 * costs writing to /dev/null, so this is the share of the time that is the runtime's own.
 */
export const INGEST_PIPE_TARGET_RATIO = 1.5;

type Variant = "rawDevNull" | "rawPipe" | "shellJob" | "monitorJob";
const VARIANTS: readonly Variant[] = ["rawDevNull", "rawPipe", "shellJob", "monitorJob"];

export interface VariantFigures {
  /** Wall time, ms. */
  wall: Summary;
  /** CPU time of this process during the run (user + system, all threads), ms. */
  cpu: Summary;
}

export interface IngestResult {
  command: string;
  lines: number;
  bytes: number;
  rounds: number;
  rawDevNull: VariantFigures;
  rawPipe: VariantFigures;
  shellJob: VariantFigures;
  monitorJob: VariantFigures;
  /** Median job time over median raw time (stdout to /dev/null), and over the main-thread pipe read. */
  ratios: {
    shellVsDevNull: number;
    monitorVsDevNull: number;
    shellVsPipe: number;
    monitorVsPipe: number;
    pipeVsDevNull: number;
  };
  /** Bytes per second through the monitor actor, from the median. */
  monitorBytesPerSecond: number;
  target: string;
  met: boolean;
  pipeTarget: string;
  metVsPipe: boolean;
}

function runRaw(command: string, pipe: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const began = performance.now();
    const child = spawn("/bin/sh", ["-c", command], { stdio: ["ignore", pipe ? "pipe" : "ignore", "inherit"] });
    // Every byte goes through a 'data' callback, as a plain Node reader would see it.
    child.stdout?.on("data", () => {});
    child.once("error", reject);
    child.once("close", () => resolve(performance.now() - began));
  });
}

async function runJob(runtime: SupervisedRuntime, kind: "shell" | "monitor"): Promise<{ wall: number; bytes: number }> {
  const job = runtime.start(kind === "monitor" ? monitorRequest(COMMAND) : jobRequest(COMMAND));
  const result = await job.done;
  const wall = performance.now() - job.requestedAt;
  if (result.cause !== "exit" || result.totals.lines !== LINES) {
    throw new Error(`ingest ${kind} job ended with ${result.cause} after ${result.totals.lines} lines: ${result.message ?? ""}`);
  }
  if (kind === "monitor" && result.monitor?.status !== "result_missing") {
    throw new Error(`ingest monitor reported ${result.monitor?.status ?? "no outcome"}`);
  }
  if (result.log.path) rmSync(result.log.path, { force: true });
  return { wall, bytes: result.totals.bytes };
}

export async function benchIngest(): Promise<IngestResult> {
  const wall: Record<Variant, number[]> = { rawDevNull: [], rawPipe: [], shellJob: [], monitorJob: [] };
  const cpu: Record<Variant, number[]> = { rawDevNull: [], rawPipe: [], shellJob: [], monitorJob: [] };
  let bytes = 0;
  const runtime = installedRuntime();
  try {
    runtime.warmUp();
    await sleep(1500);
    for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round += 1) {
      for (const variant of VARIANTS) {
        // A pause between runs, as between two tool calls: the previous job's thread is back in the pool.
        await sleep(50);
        const before = process.cpuUsage();
        let elapsed: number;
        if (variant === "rawDevNull") elapsed = await runRaw(`${COMMAND} > /dev/null`, false);
        else if (variant === "rawPipe") elapsed = await runRaw(COMMAND, true);
        else {
          const run = await runJob(runtime, variant === "monitorJob" ? "monitor" : "shell");
          elapsed = run.wall;
          bytes = run.bytes;
        }
        const used = process.cpuUsage(before);
        // The first rounds load the monitor engine into the threads, as a session's first monitor would.
        if (round < WARMUP_ROUNDS) continue;
        wall[variant].push(elapsed);
        cpu[variant].push((used.user + used.system) / 1000);
      }
    }
  } finally {
    await closeRuntime(runtime);
  }
  const figures = (variant: Variant): VariantFigures => ({ wall: summarize(wall[variant]), cpu: summarize(cpu[variant]) });
  const result = {
    rawDevNull: figures("rawDevNull"),
    rawPipe: figures("rawPipe"),
    shellJob: figures("shellJob"),
    monitorJob: figures("monitorJob"),
  };
  const median = (variant: Variant) => result[variant].wall.median;
  const ratios = {
    shellVsDevNull: round(median("shellJob") / median("rawDevNull")),
    monitorVsDevNull: round(median("monitorJob") / median("rawDevNull")),
    shellVsPipe: round(median("shellJob") / median("rawPipe")),
    monitorVsPipe: round(median("monitorJob") / median("rawPipe")),
    pipeVsDevNull: round(median("rawPipe") / median("rawDevNull")),
  };
  return {
    command: COMMAND,
    lines: LINES,
    bytes,
    rounds: ROUNDS,
    ...result,
    ratios,
    monitorBytesPerSecond: Math.round(bytes / (median("monitorJob") / 1000)),
    target: `monitor job ≤ ${INGEST_TARGET_RATIO}× the raw command's wall time (stdout to /dev/null)`,
    met: ratios.monitorVsDevNull <= INGEST_TARGET_RATIO,
    pipeTarget: `monitor job ≤ ${INGEST_PIPE_TARGET_RATIO}× the raw command read by the main thread through a pipe`,
    metVsPipe: ratios.monitorVsPipe <= INGEST_PIPE_TARGET_RATIO,
  };
}

export function ingestRows(result: IngestResult): Row[] {
  const cell = (figures: VariantFigures) =>
    `${ms(figures.wall.median)} median (min ${ms(figures.wall.min)}); process CPU ${ms(figures.cpu.median)}`;
  return [
    {
      benchmark: `ingest: \`${result.command}\` (${(result.bytes / 1e6).toFixed(1)} MB, ${result.rounds} rounds)`,
      variant: "raw command, stdout to /dev/null",
      result: cell(result.rawDevNull),
      target: "baseline",
      met: null,
    },
    {
      benchmark: "",
      variant: "raw command, read by the main thread through a pipe",
      result: `${cell(result.rawPipe)}; ${result.ratios.pipeVsDevNull}× raw`,
      target: "baseline",
      met: null,
    },
    {
      benchmark: "",
      variant: "pi-jobs shell job (no contract)",
      result: `${cell(result.shellJob)}; ${result.ratios.shellVsDevNull}× raw, ${result.ratios.shellVsPipe}× pipe`,
      target: "—",
      met: null,
    },
    {
      benchmark: "",
      variant: "pi-jobs monitor, pattern never matches",
      result: `${cell(result.monitorJob)}; **${result.ratios.monitorVsDevNull}× raw**, ${result.ratios.monitorVsPipe}× pipe`,
      target: `≤ ${INGEST_TARGET_RATIO}× raw`,
      met: result.met,
    },
    {
      benchmark: "",
      variant: "pi-jobs monitor against the pipe read (what any Node reader pays)",
      result: `${result.ratios.monitorVsPipe}× pipe`,
      target: `≤ ${INGEST_PIPE_TARGET_RATIO}× pipe`,
      met: result.metVsPipe,
    },
  ];
}
