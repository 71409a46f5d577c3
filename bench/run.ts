/**
 * `npm run bench`: the runtime's benchmarks side by side in one run — ingest, host responsiveness, the data plane
 * (floods, sentinel, 1 GiB), start latency, memory, starts under load, collecting many jobs with wait_jobs, and what a
 * persisted job costs beside an ordinary one. Prints a markdown table, writes every figure with the machine's facts to bench/results/latest.json, and
 * rewrites the generated part of docs/benchmarks.md (between its two markers; the prose around it is kept).
 *
 * `npm run bench -- --only=start,memory` runs a subset and only prints it: the saved results stay whole. So does a
 * quick run (`BENCH_QUICK=1`, bench/shared.ts).
 *
 * The start, memory, data-plane and lifecycle suites measure the checkout and the installed copy (bench/copy.ts); the
 * run packs and installs that copy once, before them, and removes it at the end.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { benchBurst, burstRows, type BurstResult } from "./burst.ts";
import { benchDataPlane, dataPlaneRows, type DataPlaneResult } from "./dataplane.ts";
import { benchIngest, ingestRows, type IngestResult } from "./ingest.ts";
import { installedPackage, removeInstalledPackage } from "./installed.ts";
import { benchLifecycle, lifecycleRows, type LifecycleResult } from "./lifecycle.ts";
import { benchMemory, memoryRows, type MemoryResult } from "./memory.ts";
import { benchPersistCost, persistCostRows, type PersistCostResult } from "./persist-cost.ts";
import { benchResponsiveness, responsivenessRows, type ResponsivenessResult } from "./responsiveness.ts";
import { machineFacts, QUICK, sleep, type MachineFacts, type Row } from "./shared.ts";
import { benchStart, startRows, type StartResult } from "./start.ts";
import { benchWaitJobs, waitJobsRows, type WaitJobsBenchResult } from "./wait-jobs.ts";
import { benchUsageSampling, usageSamplingRows, type UsageSamplingResult } from "./usage-sampling.ts";
import { benchTableSampling, tableSamplingRows, type TableSamplingResult } from "./table-sampling.ts";

/**
 * The order they run in (the table keeps its own). Starts under load run before the lifecycle's 20,000 short jobs, not
 * right after them: there, a batch of 64 `sleep 600` took 1.84× the floor against 1.63× with nothing run before it
 * (benchmarks.md, "Targets").
 */
const NAMES = ["ingest", "responsiveness", "dataplane", "start", "memory", "burst", "lifecycle", "waitjobs", "sampling", "table", "persist"] as const;
type Name = (typeof NAMES)[number];
/** The suites that measure the installed copy beside the checkout. */
const INSTALLED: readonly Name[] = ["dataplane", "start", "memory", "lifecycle", "burst"];

interface Results {
  machine: MachineFacts;
  /** The installed copy's `name@version` (packed from this checkout); null when no suite measured it. */
  installedCopy: string | null;
  durationSeconds: number;
  ingest?: IngestResult;
  responsiveness?: ResponsivenessResult;
  dataplane?: DataPlaneResult;
  start?: StartResult;
  memory?: MemoryResult;
  lifecycle?: LifecycleResult;
  burst?: BurstResult;
  waitjobs?: WaitJobsBenchResult;
  sampling?: UsageSamplingResult;
  processTable?: TableSamplingResult;
  persist?: PersistCostResult;
  table: Row[];
}

const BEGIN = "<!-- bench:results:begin (written by npm run bench) -->";
const END = "<!-- bench:results:end -->";

function selected(): Name[] {
  const only = process.argv.find((arg) => arg.startsWith("--only="));
  if (!only) return [...NAMES];
  const names = only.slice("--only=".length).split(",");
  for (const name of names) {
    if (!(NAMES as readonly string[]).includes(name)) throw new Error(`unknown benchmark "${name}"; known: ${NAMES.join(", ")}`);
  }
  return names as Name[];
}

function verdict(met: boolean | null): string {
  return met === null ? "" : met ? "met" : "**missed**";
}

function markdownTable(rows: readonly Row[]): string {
  const lines = ["| benchmark | variant | result | target | verdict |", "| --- | --- | --- | --- | --- |"];
  for (const row of rows) lines.push(`| ${row.benchmark} | ${row.variant} | ${row.result} | ${row.target} | ${verdict(row.met)} |`);
  return lines.join("\n");
}

function machineLine(results: Results): string {
  const m = results.machine;
  return (
    `Measured ${m.date.slice(0, 16).replace("T", " ")} UTC on ${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB, ` +
    `${m.platform}/${m.arch}, Node ${m.node} (V8 ${m.v8}); load average ${m.loadAverage.join(" / ")} at the start; ` +
    `the whole run took ${results.durationSeconds} s.`
  );
}

function writeDoc(path: string, section: string): void {
  const block = `${BEGIN}\n${section}\n${END}`;
  if (!existsSync(path)) {
    writeFileSync(path, `# Benchmarks\n\n\`npm run bench\` measures the runtime; its latest figures:\n\n${block}\n`);
    return;
  }
  const doc = readFileSync(path, "utf8");
  const begin = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  const next = begin >= 0 && end > begin ? doc.slice(0, begin) + block + doc.slice(end + END.length) : `${doc.trimEnd()}\n\n${block}\n`;
  writeFileSync(path, next);
}

/** Packs and installs the copy the suites measure beside the checkout; its `name@version`. */
async function install(): Promise<string> {
  const at = performance.now();
  console.error("… installing pi-jobs as a user does (npm pack, then pi install npm:pi-jobs@file:<tarball>)");
  const manifest = JSON.parse(readFileSync(join(await installedPackage(), "package.json"), "utf8")) as { name: string; version: string };
  console.error(`  install took ${((performance.now() - at) / 1000).toFixed(1)} s`);
  return `${manifest.name}@${manifest.version}`;
}

async function main(): Promise<void> {
  const names = selected();
  const began = performance.now();
  const machine = machineFacts();
  console.error(`pi-jobs benchmarks: ${names.join(", ")} (Node ${machine.node}, ${machine.cpus} CPUs, load ${machine.loadAverage.join(" ")})`);
  const installedCopy = names.some((name) => INSTALLED.includes(name)) ? await install() : null;

  const results: Results = { machine, installedCopy, durationSeconds: 0, table: [] };
  for (const name of names) {
    const at = performance.now();
    console.error(`… ${name}`);
    if (name === "ingest") results.ingest = await benchIngest();
    else if (name === "responsiveness") results.responsiveness = await benchResponsiveness();
    else if (name === "dataplane") results.dataplane = await benchDataPlane();
    else if (name === "start") results.start = await benchStart();
    else if (name === "lifecycle") results.lifecycle = await benchLifecycle();
    else if (name === "burst") results.burst = await benchBurst();
    else if (name === "waitjobs") results.waitjobs = await benchWaitJobs();
    else if (name === "sampling") results.sampling = await benchUsageSampling();
    else if (name === "table") results.processTable = await benchTableSampling();
    else if (name === "persist") results.persist = await benchPersistCost();
    else results.memory = await benchMemory();
    console.error(`  ${name} took ${((performance.now() - at) / 1000).toFixed(1)} s`);
    // Let the threads and processes of one benchmark wind down before the next one measures.
    await sleep(1000);
  }
  results.durationSeconds = Math.round((performance.now() - began) / 1000);
  results.table = [
    ...(results.ingest ? ingestRows(results.ingest) : []),
    ...(results.responsiveness ? responsivenessRows(results.responsiveness) : []),
    ...(results.dataplane ? dataPlaneRows(results.dataplane) : []),
    ...(results.start ? startRows(results.start) : []),
    ...(results.memory ? memoryRows(results.memory) : []),
    ...(results.lifecycle ? lifecycleRows(results.lifecycle) : []),
    ...(results.burst ? burstRows(results.burst) : []),
    ...(results.waitjobs ? waitJobsRows(results.waitjobs) : []),
    ...(results.sampling ? usageSamplingRows(results.sampling) : []),
    ...(results.processTable ? tableSamplingRows(results.processTable) : []),
    ...(results.persist ? persistCostRows(results.persist) : []),
  ];
  const table = markdownTable(results.table);
  console.log(`${table}\n\n${machineLine(results)}`);

  if (names.length !== NAMES.length || QUICK) {
    console.error(`(${QUICK ? "a quick run" : "a subset"}: bench/results/latest.json and docs/benchmarks.md are left as they were)`);
    return;
  }
  const resultsDir = fileURLToPath(new URL("./results/", import.meta.url));
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(`${resultsDir}latest.json`, `${JSON.stringify(results, null, 2)}\n`);
  writeDoc(fileURLToPath(new URL("../docs/benchmarks.md", import.meta.url)), `${table}\n\n${machineLine(results)}`);
  console.error("wrote bench/results/latest.json and docs/benchmarks.md");
}

try {
  await main();
} finally {
  await removeInstalledPackage();
}
