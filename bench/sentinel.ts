/**
 * A sentinel's latency: from the moment a job writes the line its monitor waits for to the moment the monitor's result
 * is on Pi's thread, beside what a reader on Pi's own thread could do with the same line:
 * - hand it on at once (the naive reader), leaving the process running;
 * - first stop the process's group and see it gone, as a monitor's result does before it says `cleanup: confirmed`
 *   (the floor of a result that keeps that promise).
 *
 * The process stamps the line with the time it writes it (gettimeofday, right before the write), so no fork or exec is
 * in the figure: `exec perl …` makes perl the job's only process, which sleeps 5 s after the line unless stopped.
 */
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import type { SupervisedRuntime } from "../host/runtime/runtime.ts";
import { monitorRequest, repetitions, sleep, summarize, type Summary } from "./shared.ts";

const ITERATIONS = repetitions(20, 3);

const SENTINEL_COMMAND = `exec perl -MTime::HiRes=time,sleep -e 'sleep 0.05; $| = 1; printf "__DONE__ %.6f\\n", time; sleep 5'`;
const SENTINEL_LINE = /^__DONE__ (\d+\.\d+)$/m;

/** Now, in epoch milliseconds with the sub-millisecond part (Date.now() has none). */
const epochMs = (): number => performance.timeOrigin + performance.now();

/** The ms from the stamp in `text`'s sentinel line to now. */
function sinceStamp(text: string, now: number): number {
  const stamp = SENTINEL_LINE.exec(text)?.[1];
  if (stamp === undefined) throw new Error(`no sentinel line in ${JSON.stringify(text.slice(0, 200))}`);
  return now - Number(stamp) * 1000;
}

/** Line printed → the monitor's result on this thread (completion on match: the group stopped and confirmed gone). */
export async function monitorSentinel(runtime: SupervisedRuntime): Promise<Summary> {
  const samples: number[] = [];
  for (let i = 0; i < ITERATIONS + 2; i += 1) {
    await sleep(30);
    const contract = { resultPattern: "^__DONE__ [0-9.]+$", failurePattern: null, completion: "match" as const };
    const result = await runtime.start(monitorRequest(SENTINEL_COMMAND, { contract, killGraceMs: 2000 })).done;
    const now = epochMs();
    if (result.monitor?.status !== "success" || result.cleanup !== "confirmed") {
      throw new Error(`sentinel monitor: ${result.monitor?.status ?? result.cause}, cleanup ${result.cleanup}`);
    }
    if (i >= 2) samples.push(sinceStamp(result.monitor.matched ?? "", now));
  }
  return summarize(samples);
}

/** One run of the sentinel command read on this thread; `stop` says whether its group is stopped and seen gone first. */
function readSentinel(stop: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", SENTINEL_COMMAND], { cwd: tmpdir(), stdio: ["ignore", "pipe", "pipe"], detached: true });
    let text = "";
    let seen = false;
    child.once("error", reject);
    child.stderr.resume();
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      text += chunk;
      if (seen || !SENTINEL_LINE.test(text)) return;
      seen = true;
      if (!stop) {
        resolve(sinceStamp(text, epochMs()));
        process.kill(-child.pid!, "SIGKILL");
        return;
      }
      process.kill(-child.pid!, "SIGTERM");
      child.once("close", () => {
        try {
          process.kill(-child.pid!, 0);
          reject(new Error("the sentinel's group outlived its leader"));
        } catch {
          resolve(sinceStamp(text, epochMs()));
        }
      });
    });
  });
}

/** Line printed → seen by a reader on this thread, without and with stopping the group (see the header). */
export async function mainThreadSentinel(): Promise<{ naive: Summary; stopped: Summary }> {
  const naive: number[] = [];
  const stopped: number[] = [];
  for (let i = 0; i < ITERATIONS + 2; i += 1) {
    await sleep(30);
    const naiveMs = await readSentinel(false);
    await sleep(30);
    const stoppedMs = await readSentinel(true);
    if (i >= 2) {
      naive.push(naiveMs);
      stopped.push(stoppedMs);
    }
  }
  return { naive: summarize(naive), stopped: summarize(stopped) };
}
