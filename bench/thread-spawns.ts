/**
 * The floor of pi-jobs' start and exit path, for the lifecycle's short jobs: a fresh Node process with one warm worker
 * thread per job that may run at once (32), each job a message to an idle thread, which starts `echo DONE` through
 * pi-jobs' own spawner and its client (host/runtime/spawner.ts, actors/process/spawner-client.ts), as an actor starts
 * a pipe job, and answers once the process exited and its streams closed. No pool task, contract, log, job cell,
 * mailbox or group confirmed: what a job costs with a thread of its own and pi-jobs' way of starting a process, and
 * nothing else. `node bench/thread-spawns.ts <jobs> <threads>` prints the figures as JSON.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Worker } from "node:worker_threads";
import { createSpawner } from "../host/runtime/spawner.ts";
import { cpuWall, type CpuWall } from "./cpu-wall.ts";

/** A thread's whole code: start what it is told through the spawner, answer once the process and its streams ended. */
const THREAD_CODE = `
const { parentPort, workerData } = require("node:worker_threads");
const { tmpdir } = require("node:os");
const answer = (output, code) => parentPort.postMessage({ code, output });
const fail = (error) => parentPort.postMessage({ error: String(error) });
let client = null;
async function start(command) {
  client ??= await import(workerData.client);
  const job = { shell: "/bin/sh", command, cwd: tmpdir(), env: { ...process.env }, stdin: false, tag: "bench-thread-spawns" };
  const outcome = await client.spawnThroughSpawner(workerData.socket, job);
  if (outcome.kind !== "spawned") return fail(outcome.kind + " " + (outcome.message ?? ""));
  let output = "";
  let code;
  let ends = 2;
  const end = () => { if (--ends === 0) answer(output, code); };
  outcome.io.onData((source, chunk) => { if (source === "stdout") output += Buffer.from(chunk).toString(); });
  outcome.io.onExit((exitCode) => { code = exitCode; end(); });
  outcome.io.onDrained(end);
}
parentPort.on("message", (command) => void start(command).catch(fail));`;

const CLIENT_URL = new URL("../actors/process/spawner-client.ts", import.meta.url).href;

/** Threads made up front and handed one job at a time. */
class ThreadPerJob {
  private readonly idle: Worker[];
  private readonly queue: (() => void)[] = [];
  private readonly threads: Worker[];

  constructor(count: number, socket: string) {
    this.threads = Array.from({ length: count }, () => new Worker(THREAD_CODE, { eval: true, workerData: { socket, client: CLIENT_URL } }));
    this.idle = [...this.threads];
  }

  async run(command: string): Promise<void> {
    while (this.idle.length === 0) await new Promise<void>((resolve) => this.queue.push(resolve));
    const thread = this.idle.pop()!;
    const answer = await new Promise<{ code?: number; output?: string; error?: string }>((resolve) => {
      thread.once("message", resolve);
      thread.postMessage(command);
    });
    this.idle.push(thread);
    this.queue.shift()?.();
    if (answer.error !== undefined || answer.code !== 0 || answer.output !== "DONE\n") throw new Error(`thread job: ${JSON.stringify(answer)}`);
  }

  close(): Promise<number[]> {
    return Promise.all(this.threads.map((thread) => thread.terminate()));
  }
}

async function measure(jobs: number, threads: number): Promise<CpuWall> {
  const dir = mkdtempSync(join(tmpdir(), "pi-jobs-bench-spawner-"));
  const spawner = createSpawner(dir);
  // The spawner's process and pipes do not hold the event loop (they must not keep Pi alive): this does meanwhile.
  const alive = setInterval(() => {}, 60_000);
  try {
    const socket = (await spawner.ready()) ? spawner.socketPath() : null;
    if (socket === null) throw new Error("the spawner did not listen");
    const pool = new ThreadPerJob(threads, socket);
    const one = () => pool.run("echo DONE");
    try {
      // Every thread warmed by a few jobs first, as pi-jobs' threads are by the jobs before the measured ones.
      await cpuWall(threads * 4, threads, one);
      return await cpuWall(jobs, threads, one);
    } finally {
      await pool.close();
    }
  } finally {
    await spawner.stop();
    clearInterval(alive);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs the measure in a fresh Node process and returns its figures. */
export async function threadSpawnsInChild(jobs: number, threads: number): Promise<CpuWall> {
  const args = [fileURLToPath(import.meta.url), String(jobs), String(threads)];
  const { stdout } = await promisify(execFile)(process.execPath, args, { maxBuffer: 1 << 20 });
  return JSON.parse(stdout) as CpuWall;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [jobs, threads] = process.argv.slice(2).map(Number);
  process.stdout.write(JSON.stringify(await measure(jobs!, threads!)));
}
