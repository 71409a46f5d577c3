/** Live figures the console shows: /proc parsing for the group's CPU and memory, and per-job output rates. */
import { describe, expect, it } from "vitest";
import { cpuPercent, createGroupSampler, parseCpuTicks, parseRssBytes, UNKNOWN_RESOURCES } from "../../host/console/group-resources.ts";
import { RateTracker } from "../../host/console/rates.ts";

describe("group resources", () => {
  it("parses utime+stime even when the command name holds spaces and parentheses", () => {
    const stat = "4242 (my (odd) cmd) S 1 4242 4242 0 -1 4194560 100 0 0 0 150 25 0 0 20 0 1 0 100 1000000 250";
    expect(parseCpuTicks(stat)).toBe(175);
    expect(parseRssBytes("Name:\tsh\nVmRSS:\t    1536 kB\n")).toBe(1536 * 1024);
    expect(parseRssBytes("Name:\tkthread\n")).toBeNull();
  });

  it("CPU percent counts members present in both samples by their delta and new members in full", () => {
    const before = new Map([[1, 100], [2, 50]]);
    const after = new Map([[1, 150], [3, 25]]);
    expect(cpuPercent(before, after, 1000)).toBe(75);
  });

  it("samples a group at most every 250 ms, in the background: a call shows the last reading that finished", async () => {
    let reads = 0;
    const sampler = createGroupSampler({
      members: async () => [7],
      read: (path) => {
        reads += 1;
        return path.endsWith("stat") ? `7 (sh) S 1 7 7 0 -1 0 0 0 0 0 ${reads * 10} 0 0 0 20 0 1 0 1 1 1` : "VmRSS: 100 kB\n";
      },
    });
    expect(sampler.sample(7, 0)).toEqual(UNKNOWN_RESOURCES);
    await sampler.settled();
    const first = sampler.sample(7, 100);
    expect(first).toEqual({ processes: 1, cpuPercent: null, rssBytes: 102400 });
    await sampler.settled();
    expect(reads).toBe(2);
    expect(sampler.sample(7, 1000)).toBe(first);
    await sampler.settled();
    expect(sampler.sample(7, 1100).cpuPercent).toBeCloseTo(20);
  });

  it("reads a real process group on Linux", async () => {
    if (process.platform !== "linux") return;
    const sampler = createGroupSampler();
    const own = Number(process.pid);
    sampler.sample(own);
    await sampler.settled();
    const result = sampler.sample(own);
    // The test process leads no group of its own under vitest's forks; whatever it is, the figures are sane.
    expect(result.processes === null || result.processes >= 0).toBe(true);
  });
});

describe("rates", () => {
  it("a rate is the change over at least one second; shorter intervals keep the last rate", () => {
    const rates = new RateTracker();
    expect(rates.observe("a", { lines: 0, bytes: 0 }, 0)).toEqual({ linesPerSecond: null, bytesPerSecond: null });
    expect(rates.observe("a", { lines: 5, bytes: 50 }, 400)).toEqual({ linesPerSecond: null, bytesPerSecond: null });
    expect(rates.observe("a", { lines: 20, bytes: 2000 }, 2000)).toEqual({ linesPerSecond: 10, bytesPerSecond: 1000 });
    expect(rates.observe("a", { lines: 25, bytes: 2100 }, 2100)).toEqual({ linesPerSecond: 10, bytesPerSecond: 1000 });
    rates.retain(new Set());
    expect(rates.observe("a", { lines: 30, bytes: 0 }, 5000).linesPerSecond).toBeNull();
  });
});
