/**
 * Ingest: how long `seq 1 2000000` (2 M lines, 14.9 MB) takes end to end through one job actor, beside the same
 * command with nothing reading it and with Node's main thread reading it through a pipe.
 *
 * A job's time runs from `start()` to its terminal result on the host: spawn on a warm thread, every byte read,
 * logged, batched and handed to the host, the group confirmed gone and the exit reported. The monitor variant also
 * frames every line and tests it against a pattern that never matches.
 */
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import type { SupervisedRuntime } from "../host/runtime.ts";
import { benchRuntime, closeRuntime, jobRequest, monitorRequest, ms, round, sampled, sleep, type Row, type Summary } from "./shared.ts";

const LINES = 2_000_000;
const COMMAND = `seq 1 ${LINES}`;
const ITERATIONS = 10;
const WARMUPS = 2;
export const INGEST_TARGET_RATIO = 1.5;

export interface IngestResult {
  command: string;
  lines: number;
  bytes: number;
  iterations: number;
  /** Wall time in ms of each variant. */
  rawDevNull: Summary;
  rawPipe: Summary;
  shellJob: Summary;
  monitorJob: Summary;
  /** Median job time over median raw time (stdout to /dev/null), and over the main-thread pipe read. */
  ratios: {
    shellVsDevNull: number;
    monitorVsDevNull: number;
    shellVsPipe: number;
    monitorVsPipe: number;
  };
  /** Bytes per second through the monitor actor, from the median. */
  monitorBytesPerSecond: number;
  target: string;
  met: boolean;
}

function run(command: string, pipe: boolean): Promise<{ ms: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const began = performance.now();
    const child = spawn("/bin/sh", ["-c", command], { stdio: ["ignore", pipe ? "pipe" : "ignore", "inherit"] });
    let bytes = 0;
    child.stdout?.on("data", (chunk: Buffer) => (bytes += chunk.length));
    child.once("error", reject);
    child.once("close", () => resolve({ ms: performance.now() - began, bytes }));
  });
}

async function throughJob(runtime: SupervisedRuntime, kind: "shell" | "monitor"): Promise<{ ms: number; bytes: number }> {
  const job = runtime.start(kind === "monitor" ? monitorRequest(COMMAND) : jobRequest(COMMAND));
  const result = await job.done;
  const elapsed = performance.now() - job.requestedAt;
  if (result.cause !== "exit" || result.totals.lines !== LINES) {
    throw new Error(`ingest ${kind} job ended with ${result.cause} after ${result.totals.lines} lines: ${result.message ?? ""}`);
  }
  if (kind === "monitor" && result.monitor?.status !== "result_missing") {
    throw new Error(`ingest monitor reported ${result.monitor?.status ?? "no outcome"}`);
  }
  if (result.log.path) rmSync(result.log.path, { force: true });
  return { ms: elapsed, bytes: result.totals.bytes };
}

export async function benchIngest(): Promise<IngestResult> {
  let bytes = 0;
  const rawDevNull = await sampled("ingest raw > /dev/null", ITERATIONS, WARMUPS, async () => (await run(`${COMMAND} > /dev/null`, false)).ms);
  const rawPipe = await sampled("ingest raw via pipe", ITERATIONS, WARMUPS, async () => {
    const measured = await run(COMMAND, true);
    bytes = measured.bytes;
    return measured.ms;
  });
  // One warm thread is all a single job needs; warming up first keeps the thread start out of every sample.
  const runtime = benchRuntime({ warm: 1 });
  try {
    runtime.warmUp();
    await sleep(1000);
    const shellJob = await sampled("ingest shell job", ITERATIONS, WARMUPS, async () => (await throughJob(runtime, "shell")).ms);
    // The warmups also load the monitor engine into the thread, as a session's first monitor would.
    const monitorJob = await sampled("ingest monitor job", ITERATIONS, WARMUPS, async () => (await throughJob(runtime, "monitor")).ms);
    const ratios = {
      shellVsDevNull: round(shellJob.median / rawDevNull.median),
      monitorVsDevNull: round(monitorJob.median / rawDevNull.median),
      shellVsPipe: round(shellJob.median / rawPipe.median),
      monitorVsPipe: round(monitorJob.median / rawPipe.median),
    };
    return {
      command: COMMAND,
      lines: LINES,
      bytes,
      iterations: ITERATIONS,
      rawDevNull,
      rawPipe,
      shellJob,
      monitorJob,
      ratios,
      monitorBytesPerSecond: Math.round(bytes / (monitorJob.median / 1000)),
      target: `monitor job ≤ ${INGEST_TARGET_RATIO}× the raw command (stdout to /dev/null)`,
      met: ratios.monitorVsDevNull <= INGEST_TARGET_RATIO,
    };
  } finally {
    await closeRuntime(runtime);
  }
}

export function ingestRows(result: IngestResult): Row[] {
  const name = `ingest: \`${result.command}\` (${(result.bytes / 1e6).toFixed(1)} MB)`;
  const cell = (summary: Summary) => `${ms(summary.median)} median (min ${ms(summary.min)}, max ${ms(summary.max)})`;
  return [
    { benchmark: name, variant: "raw command, stdout to /dev/null", result: cell(result.rawDevNull), target: "baseline", met: null },
    {
      benchmark: "",
      variant: "raw command, read by the main thread through a pipe",
      result: `${cell(result.rawPipe)}`,
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
  ];
}
