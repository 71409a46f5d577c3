import { expect, test } from "vitest";
import { runPrint, startRpc } from "./harness/cli.ts";
import { startSdkSession } from "./harness/sdk.ts";
import { startTui } from "./harness/tmux.ts";
const BAD = "/tmp/scratch-ext/bad.ts";
test("sdk bad", async () => {
  await expect(startSdkSession({ extensions: [BAD] })).rejects.toThrow(/boom-ext/);
  expect(process.env.PI_CODING_AGENT_DIR).toBeUndefined();
});
test("print bad", async () => {
  const r = await runPrint("x", { extensions: [BAD] });
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/Failed to load extension/);
});
test("rpc bad", async () => {
  await expect(startRpc({ extensions: [BAD] })).rejects.toThrow(/exited/);
});
test("tui bad", async () => {
  const t = await startTui({ extensions: [BAD] });
  try {
    await t.waitForExit();
    console.log(await t.capture());
    expect(await t.exitStatus()).toBe(1);
  } finally { await t.kill(); }
});
test("print timeout", async () => {
  await expect(runPrint("x", { steps: [{ text: "slow", delayMs: 30000 }], timeoutMs: 2000 })).rejects.toThrow(/did not exit/);
});
test("sdk wait timeout message", async () => {
  const s = await startSdkSession({ extensions: [], steps: [{ text: "a" }] });
  try {
    await s.prompt("hi");
    await expect(s.waitForSettled(2, 300)).rejects.toThrow(/agent_settled/);
  } finally { await s.dispose(); }
});
test("faux tool call + delay via rpc", async () => {
  const rpc = await startRpc({ extensions: [], steps: [{ delayMs: 300, toolCalls: [{ name: "bash", arguments: { command: "echo from-tool" } }] }, { text: "tool said: {{last}}" }] });
  try {
    await rpc.prompt("go");
    await rpc.waitForSettled(1);
    const last = await rpc.request({ type: "get_last_assistant_text" });
    console.log(JSON.stringify(last));
  } finally { console.log(await rpc.close()); }
});
