/**
 * The floor of a thread per running job, for the lifecycle's short jobs: a fresh Node process with one warm worker
 * thread per job that may run at once (32), each job a message to an idle thread, which spawns the command itself
 * (`child_process.spawn`, both pipes read) and answers when it closed. No contract, no log, no group confirmed: what
 * running many short jobs costs once each has a thread of its own, beside plain spawns from one thread
 * (bench/plain-spawns.ts). `node bench/thread-spawns.ts <jobs> <threads>` prints the figures as JSON.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Worker } from "node:worker_threads";
import { cpuWall, type CpuWall } from "./cpu-wall.ts";

/** A thread's whole code: spawn what it is told, answer with the exit code once the process and its pipes closed. */
const THREAD_CODE = `
const { parentPort } = require("node:worker_threads");
const { spawn } = require("node:child_process");
const { tmpdir } = require("node:os");
parentPort.on("message", (command) => {
  const child = spawn("/bin/sh", ["-c", command], { cwd: tmpdir(), stdio: ["ignore", "pipe", "pipe"], detached: true });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (chunk) => { output += chunk; });
  child.stderr.resume();
  child.once("error", (error) => parentPort.postMessage({ error: String(error) }));
  child.once("close", (code) => parentPort.postMessage({ code, output }));
});`;

/** Threads made up front and handed one job at a time. */
class ThreadPerJob {
  private readonly idle: Worker[];
  private readonly queue: (() => void)[] = [];
  readonly threads: Worker[];

  constructor(count: number) {
    this.threads = Array.from({ length: count }, () => new Worker(THREAD_CODE, { eval: true }));
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
  const pool = new ThreadPerJob(threads);
  const one = () => pool.run("echo DONE");
  try {
    // Every thread warmed by a few jobs first, as pi-jobs' threads are by the jobs before the measured ones.
    await cpuWall(threads * 4, threads, one);
    return await cpuWall(jobs, threads, one);
  } finally {
    await pool.close();
  }
}

/** Runs the floor in a fresh Node process and returns its figures. */
export async function threadSpawnsInChild(jobs: number, threads: number): Promise<CpuWall> {
  const { stdout } = await promisify(execFile)(process.execPath, [fileURLToPath(import.meta.url), String(jobs), String(threads)], { maxBuffer: 1 << 20 });
  return JSON.parse(stdout) as CpuWall;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [jobs, threads] = process.argv.slice(2).map(Number);
  process.stdout.write(JSON.stringify(await measure(jobs!, threads!)));
}
