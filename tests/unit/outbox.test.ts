/**
 * Output batching with credit-based backpressure (mailbox/outbox.ts), driven directly: batches form at the size
 * bound or after the linger, wait for credit, pause the writer past the high-water mark, and never drop a byte.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createOutbox, type BatchOut } from "../../mailbox/outbox.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const decode = (batches: BatchOut[]) => batches.map((b) => new TextDecoder().decode(b.payload)).join("");

afterEach(() => {
  vi.useRealTimers();
});

function harness(options: Partial<Parameters<typeof createOutbox>[0]> = {}) {
  const sent: BatchOut[] = [];
  const pressure: boolean[] = [];
  const outbox = createOutbox({
    initialCredit: 2,
    send: (batch) => sent.push(batch),
    onPressure: (paused) => pressure.push(paused),
    maxBatchBytes: 8,
    lingerMs: 5,
    highWaterBytes: 32,
    lowWaterBytes: 8,
    ...options,
  });
  return { sent, pressure, outbox };
}

describe("outbox", () => {
  it("seals a batch when it reaches the size bound and records source spans", () => {
    const { sent, outbox } = harness();
    outbox.add("stdout", bytes("abcd"), 0);
    outbox.add("stderr", bytes("ef\ngh"), 1);
    expect(sent).toHaveLength(1);
    expect(decode(sent)).toBe("abcdef\ngh");
    expect([...sent[0]!.spans]).toEqual([0, 4, 1, 5]);
    expect(sent[0]!.bytes).toBe(9);
    expect(sent[0]!.lines).toBe(1);
  });

  it("sends a small batch after the linger, so interactive output is not held back", () => {
    vi.useFakeTimers();
    const { sent, outbox } = harness();
    outbox.add("pty", bytes("$ "), 0);
    expect(sent).toHaveLength(0);
    vi.advanceTimersByTime(5);
    expect(decode(sent)).toBe("$ ");
    expect([...sent[0]!.spans]).toEqual([2, 2]);
  });

  it("holds batches without credit and sends them in order as credit arrives", () => {
    const { sent, outbox } = harness({ initialCredit: 1 });
    for (const part of ["11111111", "22222222", "33333333"]) outbox.add("stdout", bytes(part), 0);
    expect(decode(sent)).toBe("11111111");
    expect(outbox.queuedBytes()).toBe(16);
    outbox.grant(1);
    expect(decode(sent)).toBe("1111111122222222");
    outbox.grant(5);
    expect(decode(sent)).toBe("111111112222222233333333");
    expect(outbox.queuedBytes()).toBe(0);
  });

  it("asks to pause at the high-water mark and to resume below the low-water mark", () => {
    const { sent, pressure, outbox } = harness({ initialCredit: 0 });
    for (let i = 0; i < 4; i += 1) outbox.add("stdout", bytes("xxxxxxxx"), 0);
    expect(pressure).toEqual([true]);
    expect(outbox.paused()).toBe(true);
    outbox.grant(3);
    expect(pressure).toEqual([true, false]);
    expect(outbox.paused()).toBe(false);
    expect(sent).toHaveLength(3);
  });

  it("drains everything at the end, credit or not, and loses nothing", () => {
    const { sent, outbox } = harness({ initialCredit: 0 });
    let expected = "";
    for (let i = 0; i < 20; i += 1) {
      const part = `line ${i}\n`;
      expected += part;
      outbox.add(i % 2 ? "stderr" : "stdout", bytes(part), 1);
    }
    outbox.drain();
    expect(decode(sent)).toBe(expected);
    expect(sent.reduce((sum, batch) => sum + batch.lines, 0)).toBe(20);
    outbox.close();
    outbox.add("stdout", bytes("late"), 0);
    outbox.drain();
    expect(decode(sent)).toBe(expected);
  });
});
