/**
 * The byte-skip optimiser on its own: which lines of a chunk are left to the framer, and that skipping the rest
 * leaves the diagnostic tail as pushing every record would. The engine-level check (same outcome with and without
 * skipping, on real floods) is in tests/integration/monitor-engine.test.ts.
 */
import { describe, expect, it } from "vitest";
import { createDiagnosticTail } from "../../actors/monitor/diagnostic-tail.ts";
import type { FramedRecord } from "../../actors/output/framing.ts";
import { ENGINE_LIMITS } from "../../actors/monitor/engine.ts";
import { literalBytes, quietLines, tailStart } from "../../actors/monitor/quiet-lines.ts";
import type { LineSource } from "../../mailbox/monitor.ts";

const bytesOf = (text: string): Buffer => Buffer.from(text, "utf8");
const numbers = (from: number, count: number): string => Array.from({ length: count }, (_, i) => `${from + i}\n`).join("");

describe("the diagnostic tail shortcut", () => {
  it("leaves the tail exactly as pushing every record would", () => {
    const records = (texts: string[]): FramedRecord<LineSource>[] =>
      texts.map((text) => ({ source: "stdout", text, bytes: Buffer.byteLength(text), overLimit: false }));
    const shapes = [
      Array.from({ length: 500 }, (_, i) => `line ${i}`),
      Array.from({ length: 500 }, (_, i) => `line ${Math.floor(i / 7)}`),
      [...Array.from({ length: 300 }, () => "same"), ...Array.from({ length: 99 }, (_, i) => `x${i}`)],
      [...Array.from({ length: 300 }, () => "same"), ...Array.from({ length: 100 }, (_, i) => `x${i}`)],
      [...Array.from({ length: 300 }, () => "same"), ...Array.from({ length: 101 }, (_, i) => `x${i}`)],
      Array.from({ length: 90 }, (_, i) => `short ${i}`),
    ];
    for (const shape of shapes) {
      for (const previous of [[], ["same"], ["line 0", "other"]]) {
        const full = createDiagnosticTail();
        const shortcut = createDiagnosticTail();
        for (const text of previous) {
          full.push("stdout", text);
          shortcut.push("stdout", text);
        }
        const batch = records(shape);
        for (const record of batch) full.push(record.source, record.text);
        for (const record of batch.slice(tailStart(batch))) shortcut.push(record.source, record.text);
        expect(shortcut.snapshot()).toEqual(full.snapshot());
      }
    }
  });
});

describe("quietLines", () => {
  it("leaves the first line, and the newest 101 runs of lines with the partial line, to the framer", () => {
    const chunk = bytesOf(`${numbers(0, 1000)}partial`);
    const range = quietLines(chunk, [], ENGINE_LIMITS.maxLineBytes);
    expect(range).toEqual({ from: "0\n".length, to: chunk.indexOf("899\n") });
  });

  it("counts a run of identical lines once, and lines that differ anywhere as different", () => {
    const chunk = bytesOf(`${numbers(0, 3000)}${"same\n".repeat(300)}${numbers(1000, 100)}`);
    expect(quietLines(chunk, [], ENGINE_LIMITS.maxLineBytes)?.to).toBe(chunk.indexOf("same\n"));
    const alternating = (count: number, width: number) =>
      Array.from({ length: count }, (_, i) => `${i % 2 === 0 ? "a" : "b"}${"x".repeat(width)}\n`).join("");
    for (const width of [0, 1, 30, 100]) {
      const lines = bytesOf(`${numbers(0, 3000)}!\n${alternating(101, width)}`);
      expect(quietLines(lines, [], ENGINE_LIMITS.maxLineBytes)?.to).toBe(lines.indexOf("!\n") + 2);
    }
  });

  it("finds a run's first line by its start, not by a longer line that ends the same way", () => {
    const chunk = bytesOf(`${numbers(0, 3000)}xab\n${"ab\n".repeat(50)}${numbers(5000, 100)}`);
    expect(quietLines(chunk, [], ENGINE_LIMITS.maxLineBytes)?.to).toBe(chunk.indexOf("xab\n") + 4);
  });

  it("frames a chunk whole when skipping could change something or would not pay", () => {
    const flood = numbers(0, 1000);
    const check = (text: string | Buffer, literals: Uint8Array[] = []) =>
      quietLines(typeof text === "string" ? bytesOf(text) : text, literals, ENGINE_LIMITS.maxLineBytes);
    expect(check(flood)).not.toBeNull();
    // A literal among the lines that would be skipped; one only among those kept does not matter.
    expect(check(flood, [bytesOf("123")])).toBeNull();
    expect(check(flood, [bytesOf("NEVER"), bytesOf("999")])).not.toBeNull();
    // A CR ends records too.
    expect(check(`${flood}progress\r`)).toBeNull();
    // Lines over the matching bound must be framed to fail the contract; one of exactly the bound need not.
    expect(check(`${numbers(0, 100)}${"x".repeat(64 * 1024 + 1)}\n${flood}`)).toBeNull();
    expect(check(`${numbers(0, 100)}${"x".repeat(64 * 1024)}\n${flood}`)).not.toBeNull();
    // ... but once nothing can match (no literals to rule out), they are only output for the tail.
    expect(quietLines(bytesOf(`${numbers(0, 100)}${"x".repeat(64 * 1024 + 1)}\n${flood}`), null, ENGINE_LIMITS.maxLineBytes)).not.toBeNull();
    // Invalid UTF-8 where runs are counted: different bytes may be the same text.
    expect(check(Buffer.concat([bytesOf(flood), Buffer.from([0xff, 0x0a, 0xfe, 0x0a])]))).toBeNull();
    // Fewer than 101 runs, a flood of one line, a small chunk.
    expect(check(numbers(0, 100))).toBeNull();
    expect(check("y\n".repeat(5000))).toBeNull();
    expect(check(numbers(0, 150).slice(0, 1000))).toBeNull();
  });
});

describe("literalBytes", () => {
  it("gives a literal's UTF-8 bytes, and refuses one that could match half a character or any invalid byte", () => {
    expect(literalBytes("DONE €")).toEqual(bytesOf("DONE €"));
    expect(literalBytes(null)).toBeNull();
    expect(literalBytes("a\ud83d")).toBeNull();
    expect(literalBytes("bad \ufffd byte")).toBeNull();
  });
});
