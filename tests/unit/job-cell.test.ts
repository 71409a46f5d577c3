/**
 * The job's shared cell: what the actor writes is what the host reads, field by field, and the spawn handshake
 * lets exactly one side win the `starting` state.
 */
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { createJobCell, JOB_CELL_BYTES, JobCellReader, JobCellWriter } from "../../mailbox/cell.ts";

describe("job cell", () => {
  it("reads back every field the writer stores", () => {
    const buffer = createJobCell();
    expect(buffer.byteLength).toBe(JOB_CELL_BYTES);
    const writer = new JobCellWriter(buffer);
    const reader = new JobCellReader(buffer);
    expect(reader.read()).toEqual({
      state: "starting",
      pid: null,
      pgid: null,
      cancelled: false,
      paused: false,
      bytes: 0,
      lines: 0,
      lastOutputEpochMs: null,
      startedEpochMs: null,
      logBytes: 0,
      logTruncated: false,
      unreadBytes: 0,
      evidenceLines: 0,
      heartbeat: 0,
      stalled: false,
      waitingForInput: false,
      runaway: false,
      usage: null,
    });
    expect(writer.claimSpawn()).toBe(true);
    expect(reader.state()).toBe("spawning");
    writer.publishSpawn(4242, 4242, 1_700_000_000_000);
    writer.addOutput(10, 2, 1_700_000_000_500);
    writer.addOutput(5_000_000_000, 1, 1_700_000_000_900); // past 32 bits
    writer.setPaused(true);
    writer.setLog(123, true);
    writer.setUnread(77);
    writer.beat();
    writer.beat();
    writer.setStuck({ stalled: false, waitingForInput: true });
    writer.setRunaway(true);
    const usage = { rssBytes: 6_000_000_000, peakRssBytes: 6_100_000_000, cpuPercent: 190.5, cpuMs: 600_000, processes: 7, peakProcesses: 9 };
    writer.setUsage(usage);
    expect(reader.read()).toEqual({
      state: "running",
      pid: 4242,
      pgid: 4242,
      cancelled: false,
      paused: true,
      bytes: 5_000_000_010,
      lines: 3,
      lastOutputEpochMs: 1_700_000_000_900,
      startedEpochMs: 1_700_000_000_000,
      logBytes: 123,
      logTruncated: true,
      unreadBytes: 77,
      evidenceLines: 0,
      heartbeat: 2,
      stalled: false,
      waitingForInput: true,
      runaway: true,
      usage,
    });
    writer.setStuck({ stalled: true, waitingForInput: false });
    expect(reader.read()).toMatchObject({ stalled: true, waitingForInput: false });
    writer.setState("ended");
    expect(reader.state()).toBe("ended");
  });

  it("names the actor's thread once it has started: its Linux thread id, or none known", () => {
    const buffer = createJobCell();
    const reader = new JobCellReader(buffer);
    const writer = new JobCellWriter(buffer);
    expect(reader.thread()).toEqual({ started: false });
    writer.publishThread(31337);
    expect(reader.thread()).toEqual({ started: true, tid: 31337 });
    writer.publishThread(null);
    expect(reader.thread()).toEqual({ started: true, tid: null });
    // The words after it are untouched.
    writer.addOutput(5, 1, 7);
    expect(reader.read()).toMatchObject({ bytes: 5, lines: 1, lastOutputEpochMs: 7, heartbeat: 0 });
  });

  it("a cancel before the spawn is claimed wins: the actor then may not spawn", () => {
    const buffer = createJobCell();
    const reader = new JobCellReader(buffer);
    const writer = new JobCellWriter(buffer);
    expect(reader.cancel()).toBe(true);
    expect(reader.state()).toBe("cancelled");
    expect(writer.claimSpawn()).toBe(false);
    expect(writer.cancelRequested()).toBe(true);
  });

  it("a cancel after the spawn is claimed only raises the flag, for the actor to act on once published", () => {
    const buffer = createJobCell();
    const reader = new JobCellReader(buffer);
    const writer = new JobCellWriter(buffer);
    expect(writer.claimSpawn()).toBe(true);
    expect(reader.cancel()).toBe(false);
    expect(reader.state()).toBe("spawning");
    expect(writer.cancelRequested()).toBe(true);
  });

  it("agrees across threads, and the host can await a state change without blocking", async () => {
    const buffer = createJobCell();
    const reader = new JobCellReader(buffer);
    const url = new URL("../../mailbox/cell.ts", import.meta.url).href;
    const worker = new Worker(
      `import(${JSON.stringify(url)}).then(({ JobCellWriter }) => {
        const { workerData } = require("node:worker_threads");
        const cell = new JobCellWriter(workerData);
        cell.claimSpawn();
        setTimeout(() => { cell.addOutput(3, 1, 6); cell.publishSpawn(99, 99, 5); }, 50);
      });`,
      { eval: true, workerData: buffer },
    );
    try {
      let state = reader.state();
      const deadline = Date.now() + 20_000;
      while (state !== "running" && Date.now() < deadline) state = await reader.changed(state, 1000);
      expect(state).toBe("running");
      expect(reader.read()).toMatchObject({ pid: 99, pgid: 99, bytes: 3, lines: 1, lastOutputEpochMs: 6, startedEpochMs: 5 });
    } finally {
      await worker.terminate();
    }
  });

  it("refuses a buffer of the wrong size", () => {
    expect(() => new JobCellReader(new SharedArrayBuffer(8))).toThrow(/job cell has/);
  });
});
