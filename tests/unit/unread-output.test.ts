import { describe, expect, it } from "vitest";
import { UnreadOutput } from "../../actors/output/unread.ts";
import { incompleteSuffix, leadingContinuations } from "../../shared/utf8.ts";

const enc = (s: string) => new TextEncoder().encode(s);

describe("UnreadOutput", () => {
  it("returns everything when it fits, then nothing", () => {
    const acc = new UnreadOutput(16, 16);
    acc.feed("stdout", enc("hello "));
    acc.feed("stdout", enc("world"));
    expect(acc.take(false)).toEqual({ text: "hello world", bytes: 11, omittedBytes: 0, middle: null });
    expect(acc.take(false)).toEqual({ text: "", bytes: 0, omittedBytes: 0, middle: null });
    expect(acc.totalBytes).toBe(11);
  });
  it("keeps head and tail with an omission marker and the omitted byte count", () => {
    const acc = new UnreadOutput(10, 10);
    for (let i = 0; i < 100; i += 1) acc.feed("stdout", enc(String(i % 10)));
    const out = acc.take(true);
    expect(out.bytes).toBe(100);
    expect(out.omittedBytes).toBe(80);
    expect(out.text.startsWith("0123456789")).toBe(true);
    expect(out.text.endsWith("0123456789")).toBe(true);
    expect(out.text).toContain("80 bytes omitted");
  });
  it("keeps the tail across many chunks and one huge chunk", () => {
    const acc = new UnreadOutput(4, 8);
    acc.feed("stdout", enc("HEAD"));
    acc.feed("stdout", enc("x".repeat(1_000_000)));
    acc.feed("stdout", enc("TAIL1234"));
    const out = acc.take(true);
    expect(out.text.startsWith("HEAD")).toBe(true);
    expect(out.text.endsWith("TAIL1234")).toBe(true);
    expect(out.omittedBytes).toBe(1_000_000);
  });
  it("never cuts a character in two at the head or the tail", () => {
    const acc = new UnreadOutput(5, 5);
    // "é" is 2 bytes: head = "ab" + "é" + first byte of next "é" would split.
    acc.feed("stdout", enc("abéé" + "z".repeat(20) + "éé"));
    const out = acc.take(true);
    expect(out.text).not.toContain("\ufffd");
    expect(out.text.startsWith("abé")).toBe(true);
    expect(out.text.endsWith("éé") || out.text.endsWith("é")).toBe(true);
    expect(out.bytes).toBe(2 + 4 + 20 + 4);
  });
  it("holds back a character split between reads until its last byte arrives", () => {
    const acc = new UnreadOutput(64, 64);
    const euro = enc("€"); // 3 bytes
    acc.feed("stdout", Uint8Array.from([0x41, euro[0]!, euro[1]!]));
    const first = acc.take(false);
    expect(first.text).toBe("A");
    expect(first.bytes).toBe(1);
    expect(acc.pendingBytes).toBe(2);
    acc.feed("stdout", Uint8Array.from([euro[2]!]));
    expect(acc.take(false).text).toBe("€");
  });
  it("decodes an unfinished character on the final read", () => {
    const acc = new UnreadOutput(64, 64);
    acc.feed("stdout", Uint8Array.from([0x41, 0xe2, 0x82]));
    expect(acc.take(true)).toEqual({ text: "A\ufffd", bytes: 3, omittedBytes: 0, middle: null });
  });
  it("does constant work per push (a million pushes stay fast and bounded)", () => {
    const acc = new UnreadOutput(1024, 1024);
    const chunk = enc("line of output\n");
    const started = performance.now();
    for (let i = 0; i < 1_000_000; i += 1) acc.feed("stdout", chunk);
    const pushMs = performance.now() - started;
    const out = acc.take(true);
    expect(out.bytes).toBe(15_000_000);
    expect(out.text.length).toBeLessThan(2200);
    // Generous: a quadratic or copying implementation takes far longer on a million pushes.
    expect(pushMs).toBeLessThan(5000);
  });
  it("cuts on line boundaries when it leaves bytes out, and digests what lay between", () => {
    const acc = new UnreadOutput(64, 64);
    const lines = Array.from({ length: 200 }, (_, i) => `line ${i + 1} of the build\n`);
    for (const line of lines) acc.feed("stdout", enc(line));
    const out = acc.take(true);
    const [head, tail] = out.text.split(/\[… \d+ bytes omitted; the full output is in log_path …\]\n/);
    // Every shown line is a whole line of the output: none starts or ends in the middle.
    for (const shown of `${head}${tail}`.split("\n").filter((line) => line !== "")) expect(lines).toContain(`${shown}\n`);
    expect(head!.endsWith("\n")).toBe(true);
    expect(tail!.endsWith("line 200 of the build\n")).toBe(true);
    expect(out.bytes).toBe(lines.join("").length);
    expect(out.omittedBytes).toBe(out.bytes - Buffer.byteLength(head!) - Buffer.byteLength(tail!));
    // The digest accounts for every omitted line: shown lines plus omitted lines are all 200.
    const shownLines = `${head}${tail}`.split("\n").filter((line) => line !== "").length;
    expect(out.middle?.[0]).toContain(`omitted ${200 - shownLines} lines (${out.omittedBytes} bytes)`);
    const headLines = head!.split("\n").length - 1;
    const tailLines = tail!.split("\n").length - 1;
    // One shape, counting evenly: the fold is exact and names every omitted line.
    expect(out.middle).toContain(`⟪×${200 - headLines - tailLines}⟫ line {${headLines + 1}..${200 - tailLines}} of the build`);
  });
  it("finds UTF-8 boundaries", () => {
    expect(incompleteSuffix(enc("a€").subarray(0, 3))).toBe(2);
    expect(incompleteSuffix(enc("a€"))).toBe(0);
    expect(leadingContinuations(enc("€").subarray(1))).toBe(2);
  });
});
