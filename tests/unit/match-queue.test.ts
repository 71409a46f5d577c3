import { describe, expect, it } from "vitest";
import { createMatchQueue, QUEUE_LIMITS, type QueuedLine, type QueueLimits } from "../../actors/monitor/match-queue.ts";
import type { LineSource } from "../../mailbox/monitor.ts";

const line = (text: string, source: LineSource = "stdout"): QueuedLine => ({ kind: "line", source, text, bytes: text.length });
const probe = (text: string, source: LineSource = "stdout"): QueuedLine => ({ kind: "probe", source, text, bytes: text.length });
const texts = (batch: readonly QueuedLine[]): string[] => batch.map((item) => item.text);

const small: QueueLimits = { pauseLines: 4, pauseBytes: 100, resumeLines: 2, resumeBytes: 50, maxLines: 8, maxBytes: 200 };

describe("the matching queue: batches", () => {
  it("hands out batches in order, one at a time, and counts what waits or is in flight", () => {
    const queue = createMatchQueue(QUEUE_LIMITS);
    expect(queue.empty).toBe(true);
    for (const text of ["a", "bb", "ccc", "dddd", "eeeee"]) queue.add(line(text));
    expect([queue.lines, queue.bytes]).toEqual([5, 15]);
    const first = queue.takeBatch(2);
    expect(texts(first)).toEqual(["a", "bb"]);
    expect(queue.inFlight).toBe(true);
    // One batch at a time: nothing more until it settles.
    expect(queue.takeBatch(2)).toEqual([]);
    expect([queue.lines, queue.bytes]).toEqual([5, 15]);
    queue.settle();
    expect([queue.inFlight, queue.lines, queue.bytes]).toEqual([false, 3, 12]);
    expect(texts(queue.takeBatch(64))).toEqual(["ccc", "dddd", "eeeee"]);
    queue.settle();
    expect([queue.empty, queue.lines, queue.bytes]).toEqual([true, 0, 0]);
    expect(queue.takeBatch(64)).toEqual([]);
  });

  it("keeps one of identical adjacent waiting lines of a source, but not of a probe or across sources", () => {
    const queue = createMatchQueue(QUEUE_LIMITS);
    queue.add(line(""));
    queue.add(line(""));
    queue.add(line("", "stderr"));
    queue.add(probe(""));
    queue.add(probe(""));
    queue.add(line("x"));
    queue.add(line("x"));
    expect(queue.takeBatch(64).map((item) => `${item.kind}:${item.source}:${item.text}`)).toEqual([
      "line:stdout:",
      "line:stderr:",
      "probe:stdout:",
      "probe:stdout:",
      "line:stdout:x",
    ]);
  });

  it("compares a new line with the last one waiting, never with one already in flight", () => {
    const queue = createMatchQueue(QUEUE_LIMITS);
    queue.add(line("same"));
    expect(texts(queue.takeBatch(64))).toEqual(["same"]);
    queue.add(line("same"));
    expect(queue.lines).toBe(2);
    queue.settle();
    expect(texts(queue.takeBatch(64))).toEqual(["same"]);
  });

  it("stops a batch at a limit marker, which is taken by itself once everything before it has settled", () => {
    const queue = createMatchQueue(QUEUE_LIMITS);
    queue.add(line("before"));
    queue.add({ kind: "limit", source: "stderr" });
    queue.add(line("after"));
    expect(queue.takeLimit()).toBeNull();
    expect(texts(queue.takeBatch(64))).toEqual(["before"]);
    // Not while the batch before it is out.
    expect(queue.takeLimit()).toBeNull();
    queue.settle();
    expect(queue.takeLimit()).toBe("stderr");
    expect([queue.lines, queue.bytes]).toEqual([1, 5]);
    expect(queue.takeLimit()).toBeNull();
    expect(texts(queue.takeBatch(64))).toEqual(["after"]);
  });

  it("discards what waits on a decision, and keeps the batch in flight counted until it settles", () => {
    const queue = createMatchQueue(QUEUE_LIMITS);
    for (const text of ["in", "flight", "waiting", "too"]) queue.add(line(text));
    queue.takeBatch(2);
    queue.discard();
    expect([queue.lines, queue.bytes, queue.inFlight]).toEqual([2, 8, true]);
    queue.settle();
    expect([queue.empty, queue.lines, queue.bytes]).toEqual([true, 0, 0]);
    queue.discard();
    expect([queue.empty, queue.lines, queue.bytes]).toEqual([true, 0, 0]);
  });

  it("stays in order through many batches (its storage is compacted as it goes)", () => {
    const queue = createMatchQueue(QUEUE_LIMITS);
    const seen: string[] = [];
    let next = 0;
    for (let round = 0; round < 200; round++) {
      for (let i = 0; i < 70; i++) queue.add(line(String(next++)));
      seen.push(...texts(queue.takeBatch(64)));
      queue.settle();
    }
    while (!queue.empty) {
      seen.push(...texts(queue.takeBatch(64)));
      queue.settle();
    }
    expect(seen).toEqual(Array.from({ length: next }, (_, i) => String(i)));
    expect([queue.lines, queue.bytes]).toEqual([0, 0]);
  });
});

describe("the matching queue: watermarks and bound", () => {
  it("is full at the pause watermark in lines or in bytes, and caught up at the resume level", () => {
    const byLines = createMatchQueue(small);
    for (let i = 0; i < 3; i++) byLines.add(line(String(i)));
    expect(byLines.full()).toBe(false);
    byLines.add(line("3"));
    expect(byLines.full()).toBe(true);
    expect(byLines.caughtUp()).toBe(false);
    byLines.takeBatch(2);
    byLines.settle();
    expect([byLines.full(), byLines.caughtUp()]).toEqual([false, true]);

    const byBytes = createMatchQueue(small);
    byBytes.add(line("x".repeat(60)));
    expect([byBytes.full(), byBytes.caughtUp()]).toEqual([false, false]);
    byBytes.add(line("y".repeat(40)));
    expect(byBytes.full()).toBe(true);
  });

  it("is over its bound past the line limit, or past the byte limit counting output not framed yet", () => {
    const queue = createMatchQueue(small);
    for (let i = 0; i < 8; i++) queue.add(line(String(i)));
    expect(queue.overBound(0)).toBe(false);
    expect(queue.overBound(200 - 8)).toBe(false);
    expect(queue.overBound(200 - 7)).toBe(true);
    queue.add({ kind: "limit", source: "stdout" });
    expect([queue.lines, queue.bytes]).toEqual([9, 8]);
    expect(queue.overBound(0)).toBe(true);
  });
});
