/**
 * The runtime's life inside real Pi: a session shutdown leaves no process group and no worker thread behind, and
 * /reload hands a running job to the new extension instance, which reports it when it ends.
 */
import { fauxAssistantMessage, fauxToolCall } from "@earendil-works/pi-ai";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { groupMembers } from "../../shared/process-group.ts";
import { startSdkSession } from "./harness/sdk.ts";
import { pollUntil } from "./harness/wait.ts";

/** OS threads of this process (worker threads are among them). */
function threadCount(): number {
  return readdirSync("/proc/self/task").length;
}

describe("runtime lifecycle in Pi", () => {
  it("session shutdown stops every job before the handler returns, and then its workers end", async () => {
    // A first session brings up what stays for the process's life (libuv's thread pool, Pi's own helpers), so that
    // the count taken after it moves only with job workers.
    const warmup = await startSdkSession({
      extensions: ["index.ts"],
      responses: [
        fauxAssistantMessage([fauxToolCall("monitor_start", { command: "echo OK", result_pattern: "OK" })], { stopReason: "toolUse" }),
        fauxAssistantMessage("done"),
      ],
    });
    await warmup.prompt("warm up");
    await warmup.dispose();
    const before = threadCount();
    const sdk = await startSdkSession({
      extensions: ["index.ts"],
      mode: "rpc",
      responses: [
        fauxAssistantMessage(
          [0, 1, 2].map((n) =>
            fauxToolCall("monitor_start", {
              command: `echo $$ > pid-${n}; trap '' TERM; sleep 60`,
              result_pattern: "NEVER",
            }),
          ),
          { stopReason: "toolUse" },
        ),
      ],
    });
    const pidFiles = [0, 1, 2].map((n) => join(sdk.cwd, `pid-${n}`));
    let pids: number[] = [];
    try {
      await sdk.prompt("start three monitors");
      // A monitor-only batch in an RPC session ends the turn: the monitors keep running in the background.
      pids = await pollUntil(
        () => {
          try {
            // The shell creates each file before `echo` writes to it: an empty one is not read as pid 0.
            const read = pidFiles.map((file) => Number(readFileSync(file, "utf8").trim()));
            return read.every((pid) => Number.isSafeInteger(pid) && pid > 1) ? read : undefined;
          } catch {
            return undefined;
          }
        },
        { what: "three monitors to start" },
      );
      for (const pid of pids) expect((await groupMembers(pid)).length).toBeGreaterThan(0);
      expect(threadCount()).toBeGreaterThan(before);
    } finally {
      await sdk.dispose();
    }
    // dispose() awaited the session_shutdown handlers: by now every process must be gone, SIGTERM-ignoring shells too.
    for (const pid of pids) expect(await groupMembers(pid)).toEqual([]);
    // The shutdown is bounded: a thread not idle by then (a starved one, on a loaded machine) is ended right after.
    await pollUntil(() => threadCount() <= before, { timeoutMs: 60_000, what: "the workers to end" });
  });
});
