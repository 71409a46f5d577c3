import { closeSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { createLogBudget, createSessionLogDir } from "../../shared/log-budget.ts";
import { openLogWriter, type LogWriter } from "../../actors/output/log-writer.ts";

const dirs: string[] = [];
const writers: LogWriter[] = [];

afterEach(() => {
  for (const writer of writers.splice(0)) writer.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function sessionDir(): string {
  const dir = createSessionLogDir("pi-jobs-test-");
  dirs.push(dir);
  return dir;
}

function open(dir: string, name: string, maxBytes: number, budget: SharedArrayBuffer): LogWriter {
  const writer = openLogWriter({ dir, name, maxBytes, budget });
  writers.push(writer);
  return writer;
}

const budgetLeft = (budget: SharedArrayBuffer): bigint => new BigInt64Array(budget)[0] as bigint;
const text = (value: string): Uint8Array => new TextEncoder().encode(value);

/** A writer that could not create its file: no path, nothing written, the error named, and later writes refused. */
function expectRefused(writer: LogWriter, error: RegExp): void {
  expect(writer.state()).toEqual({ path: null, bytes: 0, truncated: false, error: expect.stringMatching(error) });
  expect(writer.write(text("x"))).toEqual({ accepted: 0, hitQuota: false });
}

/** Runs `body` with a umask that would strip the owner's bits the logs need, to prove the modes are set explicitly. */
function withUmask<T>(mask: number, body: () => T): T {
  const previous = process.umask(mask);
  try {
    return body();
  } finally {
    process.umask(previous);
  }
}

describe("createSessionLogDir", () => {
  it("creates a fresh 0700 directory under the temp directory, whatever the umask", () => {
    const dir = withUmask(0o277, () => sessionDir());
    expect(dirname(dir)).toBe(tmpdir());
    expect(basename(dir)).toMatch(/^pi-jobs-test-/);
    const stat = statSync(dir);
    expect(stat.isDirectory()).toBe(true);
    expect(stat.mode & 0o777).toBe(0o700);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('uses the "pi-jobs-" prefix by default', () => {
    const dir = createSessionLogDir();
    dirs.push(dir);
    expect(basename(dir)).toMatch(/^pi-jobs-/);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });
});

describe("createLogBudget", () => {
  it("holds the session's bytes in one shared BigInt64", () => {
    const budget = createLogBudget(12345);
    expect(budget).toBeInstanceOf(SharedArrayBuffer);
    expect(budget.byteLength).toBe(8);
    expect(budgetLeft(budget)).toBe(12345n);
    expect(() => createLogBudget(-1)).toThrow(RangeError);
  });
});

describe("openLogWriter", () => {
  it("creates the file exclusively with mode 0600, whatever the umask", () => {
    const dir = sessionDir();
    const writer = withUmask(0o277, () => open(dir, "job-1.log", 100, createLogBudget(100)));
    expect(writer.path).toBe(join(dir, "job-1.log"));
    expect(statSync(writer.path).mode & 0o777).toBe(0o600);
    expect(writer.state()).toEqual({ path: writer.path, bytes: 0, truncated: false, error: null });

    // A second writer never takes over (or follows a planted link to) an existing file.
    const again = open(dir, "job-1.log", 100, createLogBudget(100));
    expectRefused(again, /^cannot create log: EEXIST/);
  });

  it("refuses names that are not a plain file name", () => {
    const dir = sessionDir();
    for (const name of ["../escape.log", "sub/job.log", "..", "."]) {
      expect(() => openLogWriter({ dir, name, maxBytes: 10, budget: createLogBudget(10) })).toThrow(RangeError);
    }
  });

  it("accounts for every byte exactly, in the file, the state and the shared budget", () => {
    const dir = sessionDir();
    const budget = createLogBudget(1_000);
    const writer = open(dir, "job.log", 1_000, budget);
    const parts = ["first line\n", "", "é😀\n", "\0binary\0", "x".repeat(300)];
    let total = 0;
    for (const part of parts) {
      const bytes = text(part);
      expect(writer.write(bytes)).toEqual({ accepted: bytes.length, hitQuota: false });
      total += bytes.length;
    }
    expect(writer.state()).toEqual({ path: writer.path, bytes: total, truncated: false, error: null });
    expect(readFileSync(writer.path, "utf8")).toBe(parts.join(""));
    expect(statSync(writer.path).size).toBe(total);
    expect(budgetLeft(budget)).toBe(BigInt(1_000 - total));
  });

  it("writes the part that fits the job quota, reports the hit once, then accepts nothing", () => {
    const dir = sessionDir();
    const budget = createLogBudget(1_000);
    const writer = open(dir, "job.log", 10, budget);
    expect(writer.write(text("012345"))).toEqual({ accepted: 6, hitQuota: false });
    expect(writer.write(text("6789ABCD"))).toEqual({ accepted: 4, hitQuota: true });
    expect(writer.write(text("more"))).toEqual({ accepted: 0, hitQuota: false });
    expect(writer.state()).toEqual({
      path: writer.path,
      bytes: 10,
      truncated: true,
      error: "job log quota of 10 bytes reached",
    });
    expect(readFileSync(writer.path, "utf8")).toBe("0123456789");
    // Only what was written left the session budget.
    expect(budgetLeft(budget)).toBe(990n);
  });

  it("does not truncate a write that fills the job quota exactly", () => {
    const dir = sessionDir();
    const writer = open(dir, "job.log", 4, createLogBudget(100));
    expect(writer.write(text("abcd"))).toEqual({ accepted: 4, hitQuota: false });
    expect(writer.state().truncated).toBe(false);
    expect(writer.write(text("e"))).toEqual({ accepted: 0, hitQuota: true });
    expect(writer.state()).toMatchObject({ bytes: 4, truncated: true, error: "job log quota of 4 bytes reached" });
  });

  it("truncates at once with a job quota of zero", () => {
    const writer = open(sessionDir(), "job.log", 0, createLogBudget(100));
    expect(writer.write(text("a"))).toEqual({ accepted: 0, hitQuota: true });
    expect(writer.state()).toMatchObject({ bytes: 0, truncated: true, error: "job log quota of 0 bytes reached" });
  });

  it("shares the session quota between writers", () => {
    const dir = sessionDir();
    const budget = createLogBudget(15);
    const first = open(dir, "first.log", 100, budget);
    const second = open(dir, "second.log", 100, budget);
    expect(first.write(text("aaaaaaaaaa"))).toEqual({ accepted: 10, hitQuota: false });
    expect(second.write(text("bbbbbbbbbb"))).toEqual({ accepted: 5, hitQuota: true });
    expect(second.state()).toEqual({
      path: second.path,
      bytes: 5,
      truncated: true,
      error: "session log quota reached",
    });
    expect(first.write(text("a"))).toEqual({ accepted: 0, hitQuota: true });
    expect(first.state()).toMatchObject({ bytes: 10, truncated: true, error: "session log quota reached" });
    expect(budgetLeft(budget)).toBe(0n);
    expect(statSync(first.path).size + statSync(second.path).size).toBe(15);
  });

  it("names the job quota when both quotas are full", () => {
    const writer = open(sessionDir(), "job.log", 3, createLogBudget(2));
    expect(writer.write(text("abcdef"))).toEqual({ accepted: 2, hitQuota: true });
    expect(writer.state().error).toBe("job log quota of 3 bytes reached");
  });

  it("accepts nothing after close, without throwing or changing its state", () => {
    const budget = createLogBudget(100);
    const writer = open(sessionDir(), "job.log", 100, budget);
    writer.write(text("kept"));
    writer.close();
    writer.close();
    expect(writer.write(text("late"))).toEqual({ accepted: 0, hitQuota: false });
    expect(writer.state()).toEqual({ path: writer.path, bytes: 4, truncated: false, error: null });
    expect(readFileSync(writer.path, "utf8")).toBe("kept");
    expect(budgetLeft(budget)).toBe(96n);
  });

  it("reports a directory that vanished instead of throwing", () => {
    const dir = sessionDir();
    rmSync(dir, { recursive: true });
    const writer = open(dir, "job.log", 100, createLogBudget(100));
    expect(writer.path).toBe(join(dir, "job.log"));
    expectRefused(writer, /^cannot create log: ENOENT/);
    expect(() => writer.close()).not.toThrow();
  });

  it("reports a storage failure with the system message, gives back its reservation, and stops writing", () => {
    const dir = sessionDir();
    const budget = createLogBudget(100);
    const writer = open(dir, "job.log", 100, budget);
    expect(writer.write(text("before"))).toEqual({ accepted: 6, hitQuota: false });
    // Pull the descriptor from under the writer, as a failing device would: the next write fails with EBADF.
    const fd = readdirSync("/proc/self/fd").find((entry) => {
      try {
        return readlinkSync(`/proc/self/fd/${entry}`) === writer.path;
      } catch {
        return false;
      }
    });
    expect(fd).toBeDefined();
    closeSync(Number(fd));

    expect(writer.write(text("after"))).toEqual({ accepted: 0, hitQuota: false });
    expect(writer.state()).toEqual({
      path: writer.path,
      bytes: 6,
      truncated: false,
      error: expect.stringMatching(/^cannot write log: EBADF/),
    });
    expect(budgetLeft(budget)).toBe(94n);
    expect(writer.write(text("again"))).toEqual({ accepted: 0, hitQuota: false });
    expect(() => writer.close()).not.toThrow();
    expect(readFileSync(writer.path, "utf8")).toBe("before");
  });
});

describe("the session budget across worker threads", () => {
  // Each worker opens its own log on the shared budget and writes small chunks as fast as it can until the session
  // quota stops it. With a non-atomic reservation, the two threads would spend the same bytes twice.
  const workerSource = `
    const { parentPort, workerData } = require("node:worker_threads");
    (async () => {
      const { openLogWriter } = await import(workerData.module);
      const { dir, name, budget } = workerData;
      const writer = openLogWriter({ dir, name, maxBytes: 1e9, budget });
      const gate = new Int32Array(workerData.gate);
      parentPort.postMessage({ type: "ready" });
      Atomics.wait(gate, 0, 0);
      const chunk = new Uint8Array(workerData.chunkBytes).fill(workerData.fill);
      let accepted = 0, writes = 0, hits = 0;
      for (;;) {
        const result = writer.write(chunk);
        writes++;
        accepted += result.accepted;
        if (result.hitQuota) hits++;
        if (result.accepted < chunk.length) break;
      }
      // One more write after the quota: accepted 0, no second report.
      const after = writer.write(chunk);
      writer.close();
      parentPort.postMessage({ type: "done", accepted, writes, hits, after, state: writer.state() });
    })();
  `;

  interface Done {
    type: "done";
    accepted: number;
    writes: number;
    hits: number;
    after: { accepted: number; hitQuota: boolean };
    state: { path: string | null; bytes: number; truncated: boolean; error: string | null };
  }

  it("never grants more than the budget when two threads write at once", async () => {
    const dir = sessionDir();
    const total = 300_007;
    const budget = createLogBudget(total);
    const gate = new SharedArrayBuffer(4);
    const module = new URL("../../actors/output/log-writer.ts", import.meta.url).href;
    const workers = [0x61, 0x62].map(
      (fill, index) =>
        new Worker(workerSource, {
          eval: true,
          workerData: { module, dir, name: `w${index}.log`, budget, gate, chunkBytes: 7, fill },
        }),
    );
    const messages = workers.map((worker) => {
      const ready = new Promise<void>((resolve, reject) => {
        worker.once("error", reject);
        worker.on("message", (message: { type: string }) => message.type === "ready" && resolve());
      });
      const done = new Promise<Done>((resolve, reject) => {
        worker.once("error", reject);
        worker.on("message", (message: { type: string }) => message.type === "done" && resolve(message as Done));
      });
      return { ready, done };
    });
    try {
      await Promise.all(messages.map((message) => message.ready));
      Atomics.store(new Int32Array(gate), 0, 1);
      Atomics.notify(new Int32Array(gate), 0);
      const results = await Promise.all(messages.map((message) => message.done));

      expect(results.reduce((sum, result) => sum + result.accepted, 0)).toBe(total);
      expect(budgetLeft(budget)).toBe(0n);
      for (const [index, result] of results.entries()) {
        const path = join(dir, `w${index}.log`);
        const content = readFileSync(path);
        expect(content.length).toBe(result.accepted);
        expect(content.every((byte) => byte === [0x61, 0x62][index])).toBe(true);
        const error = "session log quota reached";
        expect(result.state).toEqual({ path, bytes: result.accepted, truncated: true, error });
        expect(result.hits).toBe(1);
        expect(result.after).toEqual({ accepted: 0, hitQuota: false });
        // Both threads really competed for the budget, many writes each.
        expect(result.writes).toBeGreaterThan(100);
      }
    } finally {
      await Promise.all(workers.map((worker) => worker.terminate()));
    }
  });
});
