import { describe, expect, it } from "vitest";
import { readDelegation } from "../../host/metrics/delegation.ts";
import { JobRateLog, JOB_WINDOW } from "../../host/metrics/job-rate-log.ts";
import { cacheHit, copyUsage, nativeTotals, reasoningBreakdown, unionMs } from "../../host/metrics/usage.ts";
import { createSampler } from "../../host/sampler.ts";

const u = (input: number, output: number, total = 0.5) => ({ input, output, cacheRead: 1, cacheWrite: 2, totalTokens: input + output + 3, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total } });

describe("usage helpers", () => {
  it("native totals follow Pi's whole-session convention and never add custom entries", () => {
    const t = nativeTotals([
      { type: "message", message: { role: "assistant", usage: u(10, 20) } },
      { type: "message", message: { role: "toolResult", usage: u(100, 200) } },
      { type: "message", message: { role: "user" } },
      { type: "usage", usage: u(1, 1) },
      { type: "compaction", usage: u(2, 2) },
      { type: "branch_summary", usage: u(3, 3) },
      { type: "custom", customType: "orbit.translator.usage.v1", data: { usage: u(9999, 9999) } },
      { type: "custom", customType: "orbit.pi-metrics.delegation.v1", data: { results: [{ input: 5000 }] } },
    ]);
    expect(t).toMatchObject({ input: 116, output: 226, cacheRead: 5, cacheWrite: 10 });
    expect(t.cost).toBeCloseTo(2.5, 9);
  });

  it("copies only numeric usage fields", () => {
    expect(copyUsage({ ...u(1, 2), raw: "payload" })).not.toHaveProperty("raw");
    expect(copyUsage(null)).toBeNull();
  });

  it("reasoning breakdown never reads zero or absence as 'no thinking'", () => {
    expect(reasoningBreakdown(5)).toBe("positive");
    expect(reasoningBreakdown(0)).toBe("zero_or_unreported");
    expect(reasoningBreakdown(null)).toBe("zero_or_unreported");
  });

  it("cache HIT is cacheRead / (input + cacheRead + cacheWrite)", () => {
    expect(cacheHit(copyUsage({ ...u(6, 1), cacheRead: 4, cacheWrite: 0 }))).toBe(0.4);
    expect(cacheHit(copyUsage({ ...u(0, 1), cacheRead: 0, cacheWrite: 0 }))).toBeNull();
  });

  it("unions overlapping tool intervals", () => {
    expect(unionMs([{ start: 0, end: 10 }, { start: 5, end: 15 }, { start: 20, end: 30 }, { start: 21, end: 22 }])).toBe(25);
    expect(unionMs([])).toBe(0);
  });
});

describe("subagent details usage", () => {
  const details = {
    mode: "parallel",
    isError: false,
    results: [
      { agent: "scout", task: "SECRET TASK", messages: [{ role: "assistant" }], stderr: "oops", exitCode: 0, model: "faux-1", usage: { input: 10, output: 5, cacheRead: 1, cacheWrite: 0, cost: 0.01, contextTokens: 99, turns: 2 } },
      { agent: "worker", exitCode: 1, usage: { input: 3, output: 4, cacheRead: 0, cacheWrite: 0, cost: 0, turns: 1 } },
    ],
  };

  it("copies allowlisted usage per result slot, never text", () => {
    const d = readDelegation({ toolCallId: "c1", toolName: "subagent", details }, "entry1");
    expect(d).toMatchObject({ mode: "parallel", toolResultEntryId: "entry1", toolCallId: "c1" });
    expect(d?.results.map((r) => [r.slot, r.agent, r.input, r.output, r.turns, r.exitCode])).toEqual([
      [0, "scout", 10, 5, 2, 0],
      [1, "worker", 3, 4, 1, 1],
    ]);
    const dump = JSON.stringify(d);
    expect(dump).not.toContain("SECRET");
    expect(dump).not.toContain("oops");
  });

  it("needs a durable entry id and the known shape", () => {
    expect(readDelegation({ details }, undefined)).toBeNull();
    expect(readDelegation({ details: { mode: "weird", results: [] } }, "e")).toBeNull();
    expect(readDelegation({ details: { text: "x" } }, "e")).toBeNull();
  });
});

describe("job figures", () => {
  it("keeps latest, peaks and a bounded window; footer only while running", () => {
    const log = new JobRateLog();
    for (let i = 0; i < JOB_WINDOW + 50; i++) log.push(i * 250, { running: i % 3, linesPerSecond: i, bytesPerSecond: 2 * i, eventLoopDelayP99Ms: i === 7 ? 40 : 1 });
    expect(log.recent()).toHaveLength(JOB_WINDOW);
    expect(log.peakLinesPerSecond).toBe(JOB_WINDOW + 49);
    expect(log.peakEventLoopDelayP99Ms).toBe(40);
    log.push(0, { running: 0, linesPerSecond: 0, bytesPerSecond: 0, eventLoopDelayP99Ms: null });
    expect(log.active()).toBeNull();
    log.push(0, null);
    expect(log.latest).toBeNull();
  });
});

describe("shared sampler", () => {
  it("ticks subscribers on one unref'd timer, survives a throwing subscriber, and stops", async () => {
    const s = createSampler(20);
    const ticks: number[] = [];
    s.subscribe(() => {
      throw new Error("broken subscriber");
    });
    const off = s.subscribe((t) => ticks.push(t));
    s.start();
    s.start();
    const deadline = Date.now() + 5000;
    while (ticks.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(ticks.length).toBeGreaterThanOrEqual(3);
    expect(ticks[1]).toBeGreaterThan(ticks[0] as number);
    s.stop();
    expect(s.running).toBe(false);
    const n = ticks.length;
    await new Promise((r) => setTimeout(r, 80));
    expect(ticks.length).toBe(n);
    off();
  });
});
