import { describe, expect, it } from "vitest";
import { MiddleDigest } from "../../actors/output/middle-digest.ts";
import { foldRead } from "../../actors/output/model-read.ts";
import { pipeText } from "../../actors/output/pipe-text.ts";
import { UnreadOutput } from "../../actors/output/unread.ts";
import { unfold } from "../fixtures/unfold.ts";

const enc = new TextEncoder();
const same = (text: string): string => text;

/** Feeds `lines` to a digest in chunks of `chunk` bytes, cutting lines and characters anywhere. */
function digestOf(lines: readonly string[], chunk: number): string[] {
  const digest = new MiddleDigest();
  const bytes = enc.encode(lines.map((line) => `${line}\n`).join(""));
  for (let at = 0; at < bytes.length; at += chunk) digest.feedBytes(bytes.subarray(at, at + chunk), same);
  return digest.finish();
}

describe("the digest of omitted output", () => {
  it("counts every line and byte, and names each shape once with what its numbers did", () => {
    const lines = Array.from({ length: 5000 }, (_, i) => `[build] step ${i + 1}/5000: compiled src/module_${i + 1}.ts in ${(i * 37) % 90} ms`);
    for (const chunk of [1, 7, 4096]) {
      const digest = digestOf(lines, chunk);
      const bytes = lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);
      expect(digest[0]).toContain(`omitted 5000 lines (${bytes} bytes)`);
      expect(digest).toContain("⟪~×5000⟫ [build] step {1..5000}/5000: compiled src/module_{1..5000}.ts in {~0..89} ms");
      expect(digest.at(-1)).toBe("⟪end of omitted⟫");
    }
  });

  it("writes an exact fold when the lines were one run that counts evenly", () => {
    const lines = Array.from({ length: 3000 }, (_, i) => `chunk ${String(i).padStart(4, "0")} written`);
    const digest = digestOf(lines, 333);
    const fold = digest.find((line) => line.startsWith("⟪×"));
    expect(fold).toBe("⟪×3000⟫ chunk {0000..2999} written");
    expect(unfold([fold as string])).toEqual(lines);
  });

  it("keeps a planted error verbatim, however much noise surrounds it", () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => (i === 9_999 ? "ERROR: disk quota exceeded" : `noise ${i} value=${(i * 7919) % 1000}`));
    const digest = digestOf(lines, 65_536);
    expect(digest).toContain("ERROR: disk quota exceeded");
  });

  it("keeps the first evidence lines and, past its budget, their count and the last one", () => {
    const lines = Array.from({ length: 100 }, (_, i) => `src/file_${i}.ts: error: unexpected token '${"x".repeat(i % 5)}'`);
    const digest = digestOf(lines, 512);
    expect(digest.filter((line) => line.includes("error: unexpected"))).toHaveLength(21);
    expect(digest).toContain("⟪80 more error-like lines; the last of them:⟫");
    expect(digest.at(-2)).toBe(lines[99]);
  });

  it("counts lines of shapes past its budget together instead of listing them", () => {
    const words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"];
    const lines = Array.from({ length: 400 }, (_, i) => `${words[i % 8]} ${words[Math.floor(i / 8) % 8]} ${words[Math.floor(i / 64) % 8]}`);
    const digest = digestOf(lines, 100);
    const listed = digest.filter((line) => !line.startsWith("⟪"));
    expect(listed.length + digest.filter((line) => /^⟪~?×/.test(line)).length).toBe(24);
    expect(digest.some((line) => /^⟪\d+ more lines of other shapes⟫$/.test(line))).toBe(true);
  });
});

describe("a read over its budget", () => {
  it("cuts on line boundaries, folds its head and tail, keeps the last lines and the result line verbatim", () => {
    const unread = new UnreadOutput(8192, 8192, pipeText);
    const lines = Array.from({ length: 2000 }, (_, i) => `[build] step ${i + 1}/2000: compiled src/module_${i + 1}.ts in ${(i * 37) % 90 + 3} ms`);
    lines.push('__RESULT__ {"ok":true,"modules":2000}');
    for (const line of lines) unread.feed("stdout", enc.encode(`${line}\n`));
    const taken = unread.take(true);
    const read = foldRead(taken.text, taken.middle);
    const shown = read.text.split("\n").filter((line) => line !== "");
    for (const line of shown.filter((line) => !line.startsWith("⟪"))) expect(lines).toContain(line);
    expect(shown.at(-1)).toBe('__RESULT__ {"ok":true,"modules":2000}');
    expect(shown.slice(-10)).toEqual(lines.slice(-10));
    expect(read.foldedLines).toBeGreaterThan(200);
    expect(read.text.length).toBeLessThan(2500);
  });
});
