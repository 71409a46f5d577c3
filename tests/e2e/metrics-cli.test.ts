/**
 * Recording outside the TUI: real `pi` processes in print, JSON and RPC modes persist the same records, keep
 * stdout clean, and answer /metrics with a notification in RPC.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runJson, runPrint, startRpc, type RpcSession } from "./harness/cli.ts";
import { makeTempDir, removeDir } from "./harness/paths.ts";

const FIXTURE = "tests/fixtures/metrics-extension.ts";
const ANSWER = "measured answer ".repeat(25);
const dirs: string[] = [];
let rpc: RpcSession | undefined;

afterAll(async () => {
  await rpc?.close();
  for (const d of dirs) removeDir(d);
});

function sessionEntries(sessionDir: string): { type: string; customType?: string; data?: any }[] {
  const files: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name.endsWith(".jsonl")) files.push(join(d, e.name));
    }
  };
  walk(sessionDir);
  expect(files).toHaveLength(1);
  return readFileSync(files[0] as string, "utf8").trim().split("\n").map((l) => JSON.parse(l));
}

const ofType = (entries: ReturnType<typeof sessionEntries>, t: string) => entries.filter((e) => e.type === "custom" && e.customType === t).map((e) => e.data);

describe("metrics recording in print, JSON and RPC modes", () => {
  it.each([
    ["print", runPrint],
    ["json", runJson],
  ] as const)("%s mode persists finalized request and activity records", async (_mode, run) => {
    const sessionDir = makeTempDir("metrics-sessions");
    dirs.push(sessionDir);
    const result = await run("go", { extensions: [FIXTURE], steps: [{ text: ANSWER, delayMs: 400 }], tokensPerSecond: 300, sessionDir });
    expect(result.code).toBe(0);
    const entries = sessionEntries(sessionDir);
    const [req] = ofType(entries, "orbit.pi-metrics.v2");
    expect(req.ttftMs).toBeGreaterThanOrEqual(400);
    expect(req.outputTps).toBeGreaterThan(0);
    expect(req.stopReason).toBe("stop");
    const runs = ofType(entries, "orbit.pi-metrics.run.v2");
    expect(runs.at(0)).toMatchObject({ phase: "start", state: "running" });
    expect(runs.at(-1)).toMatchObject({ phase: "final", state: "settled", coveredRequests: 1 });
    expect(ofType(entries, "orbit.pi-metrics.trace.v2").map((t) => t.kind)).toContain("first_observation");
    expect(JSON.stringify(entries.filter((e) => e.type === "custom"))).not.toContain("measured answer");
  });

  it("rpc: /metrics and /metrics details answer with notifications and stdout stays JSONL", async () => {
    rpc = await startRpc({ extensions: [FIXTURE], steps: [{ text: ANSWER }], tokensPerSecond: 300, env: { PI_METRICS_FAKE_JOBS: "1" } });
    await rpc.prompt("go");
    await rpc.waitForSettled(1, 30_000);
    await rpc.prompt("/metrics");
    const summary = await rpc.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify" && String(r.message).startsWith("Metrics (active branch)"));
    expect(String(summary.message)).toMatch(/Effective throughput: \d+(\.\d)? tok\/s .*\(covered 1\/1 requests\)/);
    // The shared 250 ms sampler also recorded the job runtime's figures.
    expect(String(summary.message)).toMatch(/Job runtime \(250 ms samples\)\n  now: 2 running · 1\.5k lines\/s · 4\.0KiB\/s · event-loop p99 3ms/);
    await rpc.prompt("/metrics details");
    const details = await rpc.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify" && String(r.message).startsWith("Metrics details"));
    expect(String(details.message)).toContain("git branch unavailable (Metrics does not own the footer)");
    await rpc.prompt("/metrics footer collapse");
    await rpc.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify" && String(r.message).includes("needs the interactive terminal UI"));
    expect(rpc.badLines).toEqual([]);
  });
});
