/**
 * The data plane: what output costs Pi's thread. Every scenario runs in a fresh child process (so host RSS growth is
 * that process's own), once with the checkout and once with the installed copy (bench/copy.ts), side by side with a
 * naive main-thread reader and the raw command in the same run.
 *
 * - floods: N concurrent `seq 1 2000000` through monitors; host event-loop delay p99 / max and host RSS growth. Beside
 *   them, the same floods read on the host by the naive reader, and read by a bare thread each while the host idles
 *   (the floor the scheduler sets for any reader off Pi's thread).
 * - sentinel: `seq 1 2000000; echo __DONE__` until the result is known, through a monitor and through exec_command.
 * - 1 GiB: through a monitor in exit mode, and the raw pipeline, with host RSS growth.
 *
 * `node bench/dataplane.ts --scenario=<name> --copy=checkout|installed` runs one scenario and prints its JSON (the
 * baselines, `idle`, `naive*` and `bare8`, take no copy); `node bench/dataplane.ts --only=<name>,…` runs a subset
 * of the scenarios, each in its child processes.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { COPIES, copyArgument, copyLabel, loadCopy, type Copy, type LoadedCopy } from "./copy.ts";
import { installedPackage, removeInstalledPackage } from "./installed.ts";
import { closeRuntime, ms, monitorRequest, quantile, repetitions, round, sampled, sleep, type Row } from "./shared.ts";

const FLOOD = "seq 1 2000000";
const SENTINEL = "seq 1 2000000; echo __DONE__";
const GIB = "head -c 1073741824 /dev/zero | tr '\\0' a | fold -w 99; echo; echo __DONE__";

type Scenario = "idle" | "floods8" | "floods64" | "naive8" | "bare8" | "naive64" | "sentinel" | "gib";
const SCENARIOS: readonly Scenario[] = ["idle", "floods8", "naive8", "bare8", "floods64", "naive64", "sentinel", "gib"];
/** Scenarios without pi-jobs: measured with no copy loaded, not once per copy. */
const BASELINES: readonly Scenario[] = ["idle", "naive8", "bare8", "naive64"];
const SENTINEL_ITERATIONS = repetitions(7, 1);
/**
 * An 8-flood window lasts about half a second, ~450 samples of the event-loop delay, so one window's p99 is its fifth
 * worst sample and moves by a millisecond or two from run to run: these scenarios run this many times, each in a
 * fresh process, interleaved, and are judged on the median.
 */
const FLOOD_ROUNDS = repetitions(5, 1);
const ROUNDED: readonly Scenario[] = ["floods8", "naive8", "bare8"];

interface Delay {
  p99: number;
  max: number;
  rssGrowthMiB: number;
  wallMs: number;
}

/** A scenario over several runs: `p99` and `wallMs` are medians, `p99s` each run's (ascending), the rest the worst. */
interface Delays extends Delay {
  p99s: number[];
}

interface Sentinel {
  raw: number;
  /** The raw command with each byte of its output read once in JavaScript: the floor of an exact digest. */
  walked: number;
  monitor: number;
  shell: number;
  naive: number;
}

interface Gib {
  raw: number;
  monitor: number;
  rssGrowthMiB: number;
  ok: boolean;
}

async function window<T>(work: () => Promise<T>): Promise<Delay & { value: T }> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  let peak = process.memoryUsage.rss();
  const base = peak;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
  histogram.enable();
  const began = performance.now();
  const value = await work();
  const wallMs = performance.now() - began;
  histogram.disable();
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage.rss());
  return { p99: histogram.percentile(99) / 1e6, max: histogram.max / 1e6, rssGrowthMiB: (peak - base) / 2 ** 20, wallMs, value };
}

/** Runs a command with its output read and discarded: the floor every reader is compared with. */
function raw(command: string, onChunk?: (chunk: Buffer) => void): Promise<number> {
  return new Promise((resolve, reject) => {
    const began = performance.now();
    const child = spawn("/bin/sh", ["-c", command], { stdio: ["ignore", "pipe", "pipe"], detached: true });
    child.stdout.on("data", onChunk ?? (() => {}));
    child.stderr.on("data", onChunk ?? (() => {}));
    child.once("error", reject);
    child.once("close", () => resolve(performance.now() - began));
  });
}

/**
 * The least a digest that is exact about every omitted line does: each byte read once in JavaScript (digit runs
 * parsed, lines counted and summed), on the thread that reads the pipe.
 */
function walked(command: string): Promise<number> {
  let lines = 0;
  let value = 0;
  let sum = 0;
  return raw(command, (chunk) => {
    for (let i = 0; i < chunk.length; i += 1) {
      const c = chunk[i] as number;
      if (c === 10) {
        lines += 1;
        sum += value;
        value = 0;
      } else if (c >= 48 && c <= 57) value = value * 10 + (c - 48);
    }
  });
}

/** The naive extension: read on the main thread, split into lines, test each with the pattern. */
function naive(command: string): Promise<number> {
  const pattern = /__DONE__/;
  let rest = "";
  return raw(command, (chunk) => {
    const parts = (rest + chunk.toString("utf8")).split("\n");
    rest = parts.pop() ?? "";
    for (const line of parts) pattern.test(line);
  });
}

async function floods(pkg: LoadedCopy, count: number): Promise<Delay> {
  const runtime = pkg.runtime({ warm: 2 });
  try {
    // The threads exist before the window opens: this measures floods, not thread starts.
    // Jobs that overlap, so that each needs a thread of its own: `true` ends so fast that a few threads served them all.
    await Promise.all(Array.from({ length: count }, () => runtime.start(monitorRequest("sleep 1")).done));
    await sleep(500);
    const measured = await window(async () => {
      const jobs = Array.from({ length: count }, () => runtime.start(monitorRequest(FLOOD)));
      const results = await Promise.all(jobs.map((job) => job.done));
      for (const result of results) if (result.cause !== "exit") throw new Error(`flood ended with ${result.cause}`);
    });
    return { p99: measured.p99, max: measured.max, rssGrowthMiB: measured.rssGrowthMiB, wallMs: measured.wallMs };
  } finally {
    await closeRuntime(runtime);
  }
}

async function naiveFloods(count: number): Promise<Delay> {
  const measured = await window(() => Promise.all(Array.from({ length: count }, () => naive(FLOOD))));
  return { p99: measured.p99, max: measured.max, rssGrowthMiB: measured.rssGrowthMiB, wallMs: measured.wallMs };
}

/** The floor: each flood read by a bare thread of its own (bench/bare-reader.ts) while the host does nothing. */
async function bareFloods(count: number): Promise<Delay> {
  const entry = new URL("./bare-reader.ts", import.meta.url);
  const threads = Array.from({ length: count }, () => new Worker(entry, { workerData: { command: FLOOD } }));
  const exited = threads.map((thread) => once(thread, "exit"));
  // The threads exist before the window opens, as the pi-jobs floods' threads do.
  await Promise.all(threads.map((thread) => once(thread, "online")));
  await sleep(500);
  const measured = await window(() =>
    Promise.all(
      threads.map((thread) => {
        const closed = once(thread, "message");
        thread.postMessage("go");
        return closed;
      }),
    ),
  );
  await Promise.all(exited);
  return { p99: measured.p99, max: measured.max, rssGrowthMiB: measured.rssGrowthMiB, wallMs: measured.wallMs };
}

const DONE_CONTRACT = { resultPattern: "__DONE__", failurePattern: null, completion: "match" as const };

async function sentinel(pkg: LoadedCopy): Promise<Sentinel> {
  const runtime = pkg.runtime({ warm: 2 });
  const shell = new pkg.ShellService(pkg.createShellState(), { runtime: () => runtime, killGraceMs: 500 });
  let calls = 0;
  try {
    const iterations = SENTINEL_ITERATIONS;
    const rawMs = await sampled("raw", iterations, 1, () => raw(SENTINEL));
    const naiveMs = await sampled("naive", iterations, 1, () => naive(SENTINEL));
    const walkedMs = await sampled("walked", iterations, 1, () => walked(SENTINEL));
    const monitorMs = await sampled("monitor", iterations, 1, async () => {
      const began = performance.now();
      const job = runtime.start(monitorRequest(SENTINEL, { contract: DONE_CONTRACT }));
      const result = await job.done;
      if (result.monitor?.status !== "success") throw new Error(`sentinel monitor: ${result.monitor?.status ?? result.cause}`);
      return performance.now() - began;
    });
    const shellMs = await sampled("shell", iterations, 1, async () => {
      const began = performance.now();
      const answer = await shell.exec({ cmd: SENTINEL, yield_time_ms: 30_000 }, { toolCallId: `bench-${(calls += 1)}`, cwd: tmpdir() });
      if (answer.running || !answer.output.includes("__DONE__")) throw new Error("sentinel shell job did not finish with its output");
      return performance.now() - began;
    });
    return { raw: rawMs.median, walked: walkedMs.median, naive: naiveMs.median, monitor: monitorMs.median, shell: shellMs.median };
  } finally {
    await shell.stopAll();
    await closeRuntime(runtime);
  }
}

async function gib(pkg: LoadedCopy): Promise<Gib> {
  const rawMs = await raw(GIB);
  const runtime = pkg.runtime({ warm: 2 });
  try {
    // Three overlapping jobs leave three loaded threads: the measured job takes one and the pool keeps its two warm
    // ones without making a thread inside the window.
    await Promise.all(Array.from({ length: 3 }, () => runtime.start(monitorRequest("sleep 1")).done));
    const measured = await window(async () => {
      const job = runtime.start(monitorRequest(GIB, { contract: { resultPattern: "__DONE__", failurePattern: null, completion: "exit" }, timeoutMs: 600_000 }));
      return job.done;
    });
    return { raw: rawMs, monitor: measured.wallMs, rssGrowthMiB: measured.rssGrowthMiB, ok: measured.value.monitor?.status === "success" };
  } finally {
    await closeRuntime(runtime);
  }
}

/** Runs one scenario in this process; the scenarios that measure pi-jobs load the copy `--copy=` names. */
async function runScenario(name: Scenario): Promise<unknown> {
  const pkg = (): Promise<LoadedCopy> => loadCopy(copyArgument());
  switch (name) {
    case "idle":
      return (({ value: _v, ...delay }) => delay)(await window(() => sleep(1000)));
    case "naive8":
      return naiveFloods(8);
    case "naive64":
      return naiveFloods(64);
    case "bare8":
      return bareFloods(8);
    case "floods8":
      return floods(await pkg(), 8);
    case "floods64":
      return floods(await pkg(), 64);
    case "sentinel":
      return sentinel(await pkg());
    case "gib":
      return gib(await pkg());
  }
}

// ── The parent: one child process per scenario and copy ──────────────────────────────────────────────

export interface DataPlaneResult {
  /** The scenarios without pi-jobs (idle host, naive reader, bare reader threads). */
  baseline: Record<string, unknown>;
  checkout: Record<string, unknown>;
  installed: Record<string, unknown>;
}

async function child(scenario: Scenario, copy: Copy | null): Promise<unknown> {
  // The child finds the run's install through the environment it inherits.
  if (copy === "installed") await installedPackage();
  return new Promise((resolve, reject) => {
    const script = fileURLToPath(import.meta.url);
    const args = [script, `--scenario=${scenario}`, ...(copy === null ? [] : [`--copy=${copy}`])];
    const proc = spawn(process.execPath, args, { env: { ...process.env, PI_JOBS_CHECK_MESSAGES: "0" }, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    proc.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    proc.once("close", (code) => {
      if (code !== 0) return reject(new Error(`dataplane scenario ${scenario} (${copy ?? "baseline"}) exited with ${code}`));
      resolve(JSON.parse(out.trim().split("\n").at(-1)!));
    });
  });
}

/** Each scenario once per copy; the 8-flood ones FLOOD_ROUNDS times each, interleaved, then taken together. */
export async function benchDataPlane(only: readonly Scenario[] = SCENARIOS): Promise<DataPlaneResult> {
  const result: DataPlaneResult = { baseline: {}, checkout: {}, installed: {} };
  const runs = (scenarios: readonly Scenario[]) =>
    scenarios.flatMap((scenario) => (BASELINES.includes(scenario) ? [null] : COPIES).map((copy) => ({ scenario, copy })));
  const measure = async ({ scenario, copy }: { scenario: Scenario; copy: Copy | null }, round = "") => {
    console.error(`  … dataplane ${scenario} (${copy ?? "baseline"})${round}`);
    const value = await child(scenario, copy);
    await sleep(500);
    return value;
  };
  const rounded = runs(only.filter((scenario) => ROUNDED.includes(scenario)));
  const delays = rounded.map((): Delay[] => []);
  for (let round = 1; round <= FLOOD_ROUNDS; round++) {
    for (const [index, run] of rounded.entries()) delays[index]!.push((await measure(run, `, round ${round} of ${FLOOD_ROUNDS}`)) as Delay);
  }
  for (const [index, { scenario, copy }] of rounded.entries()) result[copy ?? "baseline"][scenario] = acrossRuns(delays[index]!);
  for (const run of runs(only.filter((scenario) => !ROUNDED.includes(scenario)))) {
    result[run.copy ?? "baseline"][run.scenario] = await measure(run);
  }
  return result;
}

/** Several runs of one scenario as one figure: the median p99 (and its range), the worst max, the largest growth. */
function acrossRuns(delays: readonly Delay[]): Delays {
  const p99s = delays.map((delay) => delay.p99).sort((a, b) => a - b);
  const median = (sorted: readonly number[]) => quantile(sorted, 0.5);
  return {
    p99: median(p99s),
    p99s,
    max: Math.max(...delays.map((delay) => delay.max)),
    rssGrowthMiB: Math.max(...delays.map((delay) => delay.rssGrowthMiB)),
    wallMs: median(delays.map((delay) => delay.wallMs).sort((a, b) => a - b)),
  };
}

export function dataPlaneRows(result: DataPlaneResult): Row[] {
  const rows: Row[] = [];
  const delay = (d: Delay | Delays | undefined) => {
    if (!d) return "—";
    const spread = "p99s" in d && d.p99s.length > 1 ? ` (median of ${d.p99s.length} runs: ${d.p99s.map((p99) => p99.toFixed(1)).join(", ")})` : "";
    return `p99 ${d.p99.toFixed(1)}${spread} / max ${d.max.toFixed(1)} ms; host RSS +${d.rssGrowthMiB.toFixed(0)} MiB`;
  };
  const naive8 = result.baseline.naive8 as Delay | undefined;
  const naive64 = result.baseline.naive64 as Delay | undefined;
  for (const copy of COPIES) {
    const label = copyLabel(copy);
    const f8 = result[copy].floods8 as Delay | undefined;
    const f64 = result[copy].floods64 as Delay | undefined;
    if (f8) {
      rows.push({
        benchmark: "8 × `seq 1 2000000` floods: host event loop",
        variant: `pi-jobs monitors, ${label}`,
        result: delay(f8),
        target: "p99 ≤ 5 ms and ≤ ⅓ naive; RSS ≤ 50 MB",
        met: f8.p99 <= 5 && (!naive8 || f8.p99 <= naive8.p99 / 3) && f8.rssGrowthMiB <= 50,
      });
    }
    if (f64) {
      rows.push({ benchmark: "64 × `seq 1 2000000` floods: host event loop", variant: `pi-jobs monitors, ${label}`, result: delay(f64), target: "p99 ≤ 10 ms", met: f64.p99 <= 10 });
    }
    const s = result[copy].sentinel as Sentinel | undefined;
    if (s) {
      rows.push({
        benchmark: `one flood to a sentinel (median of ${SENTINEL_ITERATIONS})`,
        variant: `${label}: raw ${ms(s.raw)}, each byte read once in JavaScript ${ms(s.walked)} (${(s.walked / s.raw).toFixed(2)}× raw), naive ${ms(s.naive)}`,
        result: `monitor ${ms(s.monitor)} = ${(s.monitor / s.raw).toFixed(2)}× raw; exec_command ${ms(s.shell)} = ${(s.shell / s.raw).toFixed(2)}× raw`,
        target: "monitor ≤ 2.0×, shell ≤ 1.5× raw",
        met: s.monitor / s.raw <= 2 && s.shell / s.raw <= 1.5,
      });
    }
    const g = result[copy].gib as Gib | undefined;
    if (g) {
      rows.push({
        benchmark: "1 GiB through a monitor (exit mode)",
        variant: `${label}: raw ${(g.raw / 1000).toFixed(2)} s`,
        result: `${g.ok ? "success" : "**failed**"} in ${(g.monitor / 1000).toFixed(2)} s = ${(g.monitor / g.raw).toFixed(2)}× raw; host RSS +${g.rssGrowthMiB.toFixed(0)} MiB`,
        target: "≤ 1.7× raw, RSS ≤ 40 MB",
        met: g.ok && g.monitor / g.raw <= 1.7 && g.rssGrowthMiB <= 40,
      });
    }
  }
  if (naive8) rows.push({ benchmark: "8 floods, naive main-thread reader", variant: "baseline", result: delay(naive8), target: "baseline", met: null });
  const bare8 = result.baseline.bare8 as Delay | undefined;
  if (bare8) rows.push({ benchmark: "8 floods, a bare reader thread each (the floor)", variant: "baseline", result: delay(bare8), target: "baseline", met: null });
  if (naive64) rows.push({ benchmark: "64 floods, naive main-thread reader", variant: "baseline", result: delay(naive64), target: "baseline", met: null });
  const idle = result.baseline.idle as Delay | undefined;
  if (idle) rows.push({ benchmark: "idle host, for reference", variant: "no jobs", result: delay(idle), target: "—", met: null });
  return rows;
}

function scenarioNamed(name: string): Scenario {
  if (!(SCENARIOS as readonly string[]).includes(name)) throw new Error(`unknown dataplane scenario "${name}"; known: ${SCENARIOS.join(", ")}`);
  return name as Scenario;
}

const scenarioArg = process.argv.find((arg) => arg.startsWith("--scenario="));
if (scenarioArg) {
  let value: unknown;
  try {
    value = await runScenario(scenarioNamed(scenarioArg.slice("--scenario=".length)));
  } finally {
    // Only when run on its own: a child of a run leaves the run's install to its parent.
    await removeInstalledPackage();
  }
  const rounded = JSON.parse(JSON.stringify(value, (_k, v: unknown) => (typeof v === "number" ? round(v, 2) : v)));
  console.log(JSON.stringify(rounded));
  process.exit(0);
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const only = process.argv.find((arg) => arg.startsWith("--only="))?.slice("--only=".length).split(",").map(scenarioNamed);
  try {
    const result = await benchDataPlane(only ?? SCENARIOS);
    console.log(JSON.stringify(result, null, 2));
    for (const row of dataPlaneRows(result)) console.log(`| ${row.benchmark} | ${row.variant} | ${row.result} | ${row.target} |`);
  } finally {
    await removeInstalledPackage();
  }
}
