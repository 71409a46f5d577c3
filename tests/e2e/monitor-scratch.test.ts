import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { answer, callTools, customMessages, monitorCall, startMonitorSession, textOf, toolEnds } from "./monitor-harness.ts";

it("explore reload", async () => {
  const notes: string[] = [];
  const sdk = await startMonitorSession({ mode: "rpc", onNotify: (m) => notes.push(m) });
  try {
    const gate = join(sdk.cwd, "go");
    sdk.script(callTools(monitorCall({ command: `while [ ! -f go ]; do sleep 0.05; done; echo DONE`, result_pattern: "^DONE$" })), answer("woke: done"));
    await sdk.prompt("go");
    await sdk.session.reload();
    writeFileSync(gate, "");
    await sdk.waitForSettled(2);
    sdk.script(callTools(monitorCall({ command: `sleep 30`, result_pattern: "^DONE$" })), answer("second"));
    await sdk.prompt("again");
    await sdk.prompt("/jobs");
    await sdk.prompt("/monitor");
    console.log(notes);
  } finally {
    await sdk.dispose();
  }
});
