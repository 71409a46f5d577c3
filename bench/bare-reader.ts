/**
 * A worker thread that reads one flood and does nothing else: the least any reader off Pi's thread must do. The
 * data-plane benchmark runs one per flood beside an idle host, so the host's event-loop delay it measures is the
 * floor the machine's scheduler sets for every design that reads output on other threads, pi-jobs' actors included.
 *
 * Like a pipe job (forked by the spawner at the host's priority, in a session of its own), the flood's process is
 * forked before this thread lowers itself as an actor thread does; then the thread splits the output into lines and
 * tests each with the pattern, and reports when the process has closed.
 */
import { spawn } from "node:child_process";
import { parentPort, workerData } from "node:worker_threads";
import { lowerThisThread } from "../actors/thread/priority.ts";

const { command } = workerData as { command: string };

parentPort!.once("message", () => {
  const child = spawn("/bin/sh", ["-c", command], { stdio: ["ignore", "pipe", "pipe"], detached: true });
  lowerThisThread();
  const pattern = /__DONE__/;
  let rest = "";
  child.stdout.on("data", (chunk: Buffer) => {
    const parts = (rest + chunk.toString("utf8")).split("\n");
    rest = parts.pop() ?? "";
    for (const line of parts) pattern.test(line);
  });
  child.stderr.resume();
  child.once("close", () => parentPort!.postMessage("closed"));
});
