/**
 * A persisted job's follower (spawner/follow.pl), with real processes: stopped by SIGTERM in the middle of handing its
 * log on, the offset it records is exactly what it handed on, so that the next follower neither repeats a byte nor
 * skips one.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { followerCommand } from "../../host/persist/keeper.ts";
import { pollUntil } from "../e2e/harness/wait.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** An entry directory as the keeper leaves it: a log of `bytes` bytes, and a keeper record naming a live process. */
function entry(bytes: number): string {
  const dir = mkdtempSync(join(tmpdir(), "pi-jobs-follower-"));
  dirs.push(dir);
  // Lines of distinct text, so a repeated or a skipped stretch would show in the bytes too.
  let log = "";
  for (let i = 0; log.length < bytes; i += 1) log += `line ${i} of the job's log\n`;
  writeFileSync(join(dir, "log"), log.slice(0, bytes));
  // This test process stands in for the keeper: alive, so the follower goes on waiting for the job's end.
  writeFileSync(join(dir, "keeper"), `keeper ${process.pid} job ${process.pid} started 0\n`);
  return dir;
}

/** One follower of a fresh entry, stopped while its output waits for a reader: what it handed on, what it recorded. */
async function stopMidWrite(): Promise<{ handedOn: Buffer; recorded: number; log: Buffer; end: NodeJS.Signals | number | null }> {
  const dir = entry(4 * 1024 * 1024);
  const follower = spawn("/bin/sh", ["-c", followerCommand(dir, 0)], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => follower.once("exit", (code, signal) => resolve(signal ?? code)));
  const chunks: Buffer[] = [];
  // Its first bytes arrived: it is in its copying loop, its handler in place. From then on nobody reads: it fills
  // the pipe and blocks in the middle of a write, where the stop finds it.
  follower.stdout.once("data", () => follower.stdout.pause());
  follower.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
  await pollUntil(() => chunks.length > 0, { what: "the follower's first output" });
  await new Promise((resolve) => setTimeout(resolve, 300));
  follower.kill("SIGTERM");
  // Now the reader comes back: everything the follower wrote, to its end.
  follower.stdout.resume();
  await new Promise((resolve) => follower.stdout.once("end", resolve));
  const handedOn = Buffer.concat(chunks);
  return { handedOn, recorded: Number(readFileSync(join(dir, "read"), "utf8")), log: readFileSync(join(dir, "log")), end: await exited };
}

describe("a persisted job's follower", () => {
  it("stopped while its output waits for a reader, records exactly the bytes it handed on", async () => {
    // Where the stop lands in a write differs from run to run: several runs meet the moments a single one may miss.
    for (let run = 0; run < 10; run += 1) {
      const { handedOn, recorded, log, end } = await stopMidWrite();
      expect(end).toBe("SIGTERM");
      expect(handedOn.length).toBeGreaterThan(0);
      expect(recorded).toBe(handedOn.length);
      expect(handedOn.equals(log.subarray(0, recorded))).toBe(true);
    }
  });
});
