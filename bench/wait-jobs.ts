/**
 * wait_jobs: collecting 8 jobs of 0.2–3 s (shell jobs and monitors alternating), once with one wait_jobs call and once
 * job by job as before (a blocking write_stdin per shell job, a wake report per monitor), in the same run, on the
 * checkout. It measures:
 *
 * - tool calls the model makes: 8 starts + 1 wait, against 8 starts + one write_stdin per shell job (and a model turn
 *   per monitor wake, which the one call also saves);
 * - tokens (cl100k) of every result the model reads, against the sum of the 8 individual collections;
 * - the time from the last job's exit (its actor's end) to the answer, and from the host learning of that end to the
 *   answer, over several rounds (tinybench, bench/shared.ts).
 *
 * Run on its own with `node bench/wait-jobs.ts` (it prints the rows and writes bench/results/wait-jobs.json), or as
 * the `waitjobs` suite of `npm run bench`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Tiktoken } from "js-tiktoken/lite";
import cl100k_base from "js-tiktoken/ranks/cl100k_base";
import { processResultText } from "../host/shell/result-text.ts";
import { waitJobsText } from "../host/wait/result-text.ts";
import { direct, waitingJobs, type WaitingJobs } from "../tests/integration/waiting-jobs.ts";
import { closeRuntime, installedRuntime, machineFacts, ms, repetitions, round, sampled, summarize, waitFor, type Row, type Summary } from "./shared.ts";

const ROUNDS = repetitions(7, 1);
// A shell job outlives exec_command's 250 ms yield by far, however busy the machine: it is collected by the wait, not by its start.
const SECONDS = [0.6, 1.0, 1.4, 1.8, 2.2, 2.6, 3.0, 3.4];
const encoder = new Tiktoken(cl100k_base);
const tokens = (text: string): number => encoder.encode(text).length;

export const TARGETS = { lastExitToAnswerMs: 10 };

export interface WaitJobsBenchResult {
  jobs: number;
  callsOneWait: number;
  callsEach: number;
  wakeTurnsEach: number;
  tokensOneWait: number;
  tokensEach: number;
  /** From the last job's end (its actor's clock) to the answer, in ms. */
  lastExitToAnswer: Summary;
  /** From the host hearing the last end to the answer, in ms. */
  lastEndHeardToAnswer: Summary;
}

interface Started {
  shells: number[];
  monitors: string[];
}

async function startEight(jobs: WaitingJobs): Promise<Started> {
  const shells: Promise<number>[] = [];
  const monitors: string[] = [];
  SECONDS.forEach((seconds, i) => {
    if (i % 2 === 0) shells.push(jobs.exec(`sleep ${seconds}; seq 1 20; echo shell-${i}-done`, "none"));
    else monitors.push(jobs.monitor(`sleep ${seconds}; seq 1 20; echo DONE`));
  });
  return { shells: await Promise.all(shells), monitors };
}

/** One wait_jobs call: its text's tokens, and the two latencies to its answer. */
async function oneWait(jobs: WaitingJobs): Promise<{ tokens: number; fromExit: number; fromHeard: number }> {
  const { shells, monitors } = await startEight(jobs);
  const handles = [
    ...shells.map((id) => jobs.shell.service.session(id)!.handle),
    ...monitors.map((id) => jobs.monitors.find(id)!.job),
  ];
  let heard = 0;
  for (const handle of handles) handle.onEnd(() => (heard = Math.max(heard, performance.now())));
  const result = await jobs.wait.wait({ ids: [...shells.map(String), ...monitors] }, direct("bench-wait"));
  const answeredAt = performance.now();
  const answeredEpoch = Date.now();
  if (result.jobs.some((line) => line.collected !== "now")) throw new Error(`not every job was collected: ${result.summary}`);
  const lastEnd = Math.max(...handles.map((handle) => handle.result()!.endedAt));
  return { tokens: tokens(waitJobsText(result)), fromExit: Math.max(0, answeredEpoch - lastEnd), fromHeard: answeredAt - heard };
}

/** The same jobs collected one by one: a blocking write_stdin per shell job, a wake report per monitor. */
async function eachAlone(jobs: WaitingJobs): Promise<{ tokens: number; calls: number; wakes: number }> {
  const { shells, monitors } = await startEight(jobs);
  let total = 0;
  for (const id of shells) {
    const read = await jobs.shell.service.writeStdin({ session_id: id, yield_time_ms: 30_000 }, direct(`bench-read-${id}`));
    if (read.running) throw new Error(`job ${id} still runs after its read`);
    total += tokens(processResultText(read));
  }
  await waitFor(() => monitors.every((id) => jobs.monitorWakes.some((d) => d.details.monitorId === id)), 60_000, "every monitor's wake");
  for (const id of monitors) total += tokens(jobs.monitorWakes.find((d) => d.details.monitorId === id)!.content);
  return { tokens: total, calls: shells.length, wakes: monitors.length };
}

export async function benchWaitJobs(): Promise<WaitJobsBenchResult> {
  const runtime = installedRuntime({ warm: 2 });
  const jobs = waitingJobs(runtime);
  try {
    const each = await eachAlone(jobs);
    const samples: { tokens: number; fromExit: number; fromHeard: number }[] = [];
    const fromHeard = await sampled("wait_jobs: last end heard → answer", ROUNDS, 1, async () => {
      const sample = await oneWait(jobs);
      samples.push(sample);
      return sample.fromHeard;
    });
    const measured = samples.slice(-ROUNDS);
    // The warm-up round is left out, as tinybench leaves it out of the other figure.
    const fromExit = summarize(measured.map((s) => s.fromExit));
    return {
      jobs: SECONDS.length,
      callsOneWait: SECONDS.length + 1,
      callsEach: SECONDS.length + each.calls,
      wakeTurnsEach: each.wakes,
      tokensOneWait: measured[0]!.tokens,
      tokensEach: each.tokens,
      lastExitToAnswer: fromExit,
      lastEndHeardToAnswer: fromHeard,
    };
  } finally {
    await jobs.close();
    await closeRuntime(runtime);
  }
}

export function waitJobsRows(r: WaitJobsBenchResult): Row[] {
  return [
    { benchmark: "wait_jobs", variant: `tool calls to collect ${r.jobs} jobs`, result: `${r.callsOneWait} (each alone: ${r.callsEach} + ${r.wakeTurnsEach} wake turns)`, target: `${r.jobs} starts + 1 wait`, met: r.callsOneWait === r.jobs + 1 },
    { benchmark: "wait_jobs", variant: "tokens of all results (cl100k)", result: `${r.tokensOneWait} (each alone: ${r.tokensEach})`, target: "≤ each alone", met: r.tokensOneWait <= r.tokensEach },
    { benchmark: "wait_jobs", variant: "last exit → answer, median", result: `${ms(r.lastExitToAnswer.median)} (max ${ms(r.lastExitToAnswer.max)})`, target: `≤ ${TARGETS.lastExitToAnswerMs} ms`, met: r.lastExitToAnswer.median <= TARGETS.lastExitToAnswerMs },
    { benchmark: "wait_jobs", variant: "last end heard by the host → answer, median", result: `${ms(r.lastEndHeardToAnswer.median)} (max ${ms(r.lastEndHeardToAnswer.max)})`, target: "", met: null },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await benchWaitJobs();
  const rows = waitJobsRows(result);
  for (const row of rows) console.log(`| ${row.benchmark} | ${row.variant} | ${row.result} | ${row.target} | ${row.met === null ? "" : row.met ? "met" : "**missed**"} |`);
  const dir = fileURLToPath(new URL("./results/", import.meta.url));
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}wait-jobs.json`, `${JSON.stringify({ machine: machineFacts(), result: { ...result, lastExitToAnswer: roundAll(result.lastExitToAnswer), lastEndHeardToAnswer: roundAll(result.lastEndHeardToAnswer) } }, null, 2)}\n`);
}

function roundAll(s: Summary): Summary {
  return Object.fromEntries(Object.entries(s).map(([k, v]) => [k, typeof v === "number" ? round(v, 3) : v])) as Summary;
}
