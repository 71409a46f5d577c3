import { describe, expect, it } from "vitest";
import { OutputAccumulator, incompleteSuffix, leadingContinuations } from "../../host/shell/output-buffer.ts";

const enc = (s: string) => new TextEncoder().encode(s);

describe("OutputAccumulator", () => {
  it("returns everything when it fits, then nothing", () => {
    const acc = new OutputAccumulator(16, 16);
    acc.push(enc("hello "));
    acc.push(enc("world"));
    expect(acc.take(false)).toEqual({ text: "hello world", bytes: 11, omittedBytes: 0 });
    expect(acc.take(false)).toEqual({ text: "", bytes: 0, omittedBytes: 0 });
    expect(acc.totalBytes).toBe(11);
  });
  it("keeps head and tail with an omission marker and the omitted byte count", () => {
    const acc = new OutputAccumulator(10, 10);
    for (let i = 0; i < 100; i += 1) acc.push(enc(String(i % 10)));
    const out = acc.take(true);
    expect(out.bytes).toBe(100);
    expect(out.omittedBytes).toBe(80);
    expect(out.text.startsWith("0123456789")).toBe(true);
    expect(out.text.endsWith("0123456789")).toBe(true);
    expect(out.text).toContain("80 bytes omitted");
  });
  it("keeps the tail across many chunks and one huge chunk", () => {
    const acc = new OutputAccumulator(4, 8);
    acc.push(enc("HEAD"));
    acc.push(enc("x".repeat(1_000_000)));
    acc.push(enc("TAIL1234"));
    const out = acc.take(true);
    expect(out.text.startsWith("HEAD")).toBe(true);
    expect(out.text.endsWith("TAIL1234")).toBe(true);
    expect(out.omittedBytes).toBe(1_000_000);
  });
  it("never cuts a character in two at the head or the tail", () => {
    const acc = new OutputAccumulator(5, 5);
    // "é" is 2 bytes: head = "ab" + "é" + first byte of next "é" would split.
    acc.push(enc("abéé" + "z".repeat(20) + "éé"));
    const out = acc.take(true);
    expect(out.text).not.toContain("\ufffd");
    expect(out.text.startsWith("abé")).toBe(true);
    expect(out.text.endsWith("éé") || out.text.endsWith("é")).toBe(true);
    expect(out.bytes).toBe(2 + 4 + 20 + 4);
  });
  it("holds back a character split between reads until its last byte arrives", () => {
    const acc = new OutputAccumulator(64, 64);
    const euro = enc("€"); // 3 bytes
    acc.push(Uint8Array.from([0x41, euro[0]!, euro[1]!]));
    const first = acc.take(false);
    expect(first.text).toBe("A");
    expect(first.bytes).toBe(1);
    expect(acc.pendingBytes).toBe(2);
    acc.push(Uint8Array.from([euro[2]!]));
    expect(acc.take(false).text).toBe("€");
  });
  it("decodes an unfinished character on the final read", () => {
    const acc = new OutputAccumulator(64, 64);
    acc.push(Uint8Array.from([0x41, 0xe2, 0x82]));
    expect(acc.take(true)).toEqual({ text: "A\ufffd", bytes: 3, omittedBytes: 0 });
  });
  it("does constant work per push (a million pushes stay fast and bounded)", () => {
    const acc = new OutputAccumulator(1024, 1024);
    const chunk = enc("line of output\n");
    const started = performance.now();
    for (let i = 0; i < 1_000_000; i += 1) acc.push(chunk);
    const pushMs = performance.now() - started;
    const out = acc.take(true);
    expect(out.bytes).toBe(15_000_000);
    expect(out.text.length).toBeLessThan(2200);
    // Generous: a quadratic or copying implementation takes far longer on a million pushes.
    expect(pushMs).toBeLessThan(5000);
  });
  it("finds UTF-8 boundaries", () => {
    expect(incompleteSuffix(enc("a€").subarray(0, 3))).toBe(2);
    expect(incompleteSuffix(enc("a€"))).toBe(0);
    expect(leadingContinuations(enc("€").subarray(1))).toBe(2);
  });
});
