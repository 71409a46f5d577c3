import { describe, expect, it } from "vitest";
import { MiddleDigest, type TextRender } from "../../actors/output/middle-digest.ts";
import { foldRead } from "../../actors/output/model-read.ts";
import { PIPE_TEXT } from "../../actors/output/pipe-text.ts";
import { UnreadOutput } from "../../actors/output/unread.ts";
import { unfold } from "../fixtures/unfold.ts";

const enc = new TextEncoder();

/** Feeds `lines` to a digest in chunks of `chunk` bytes, cutting lines and characters anywhere. */
function digestOf(lines: readonly string[], chunk: number, render?: TextRender): string[] {
  const digest = new MiddleDigest(render);
  const bytes = enc.encode(lines.map((line) => `${line}\n`).join(""));
  for (let at = 0; at < bytes.length; at += chunk) digest.feedBytes(bytes.subarray(at, at + chunk));
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

  it("groups many error-like lines of one shape: the first three verbatim, one fold with the count, the last", () => {
    const errors = Array.from(
      { length: 10_000 },
      (_, i) => `src/pkg_${i % 97}/file_${(i * 7919) % 10007}.ts(${(i * 31) % 400 + 1},${(i * 17) % 80 + 1}): error TS23${String(i % 50).padStart(2, "0")}: Property p${i % 1000} does not exist on type T${i % 100}.`,
    );
    for (const chunk of [13, 65_536]) {
      const digest = digestOf(errors, chunk);
      expect(digest.slice(1, -1)).toEqual([
        ...errors.slice(0, 3),
        "⟪~×9996⟫ src/pkg_{~0..96}/file_{~1..10006}.ts({~1..400},{~1..80}): error TS{~2300..2349}: Property p{~0..999} does not exist on type T{~0..99}.",
        errors[9999],
      ]);
    }
  });

  it("keeps a verbatim line of every shape of error-like line, each shape's group beside it", () => {
    const lines = Array.from({ length: 100 }, (_, i) => `src/file_${i}.ts: error: unexpected token '${"x".repeat(i % 5)}'`);
    const digest = digestOf(lines, 512);
    // Three of each of the five shapes, then each shape's group: a fold of 16 and its last line.
    expect(digest.slice(1, 16)).toEqual(lines.slice(0, 15));
    // The shapes' lines were interleaved, not one run each: the folds are marked `~` though their numbers count evenly.
    const groups = [0, 1, 2, 3, 4].flatMap((k) => [`⟪~×16⟫ src/file_{${15 + k}..${90 + k}..5}.ts: error: unexpected token '${"x".repeat(k)}'`, lines[95 + k]]);
    expect(digest.slice(16, -1)).toEqual(groups);
  });

  it("keeps the first error-like lines of distinct shapes and, past its budget, their count and the last one", () => {
    const lines = Array.from({ length: 100 }, (_, i) => `error: unexpected token '${"x".repeat(i)}'`);
    const digest = digestOf(lines, 512);
    expect(digest.slice(1, 21)).toEqual(lines.slice(0, 20));
    expect(digest.slice(21, -1)).toEqual(["⟪80 more error-like lines; the last of them:⟫", lines[99]]);
  });

  it("writes what a reader sees: colour codes gone and carriage returns applied, the numbers where the text has them", () => {
    const steps = Array.from({ length: 1000 }, (_, i) => `\u001b[32m✓\u001b[39m step ${i} \u001b[2m(${i % 7} ms)\u001b[22m`);
    const lines = [...steps, "\u001b[31mERROR\u001b[39m: disk quota exceeded", "progress 10%\rprogress 100% done", "\u001b]0;title\u0007build done"];
    for (const chunk of [1, 7, 4096]) {
      const digest = digestOf(lines, chunk, PIPE_TEXT);
      expect(digest.slice(1, -1)).toEqual(["⟪~×1000⟫ ✓ step {0..999} ({~0..6} ms)", "ERROR: disk quota exceeded", "progress 100% done", "build done"]);
    }
    const crlf = digestOf(Array.from({ length: 500 }, (_, i) => `step ${i}\r`), 64, PIPE_TEXT);
    expect(crlf[1]).toBe("⟪×500⟫ step {0..499}");
    const plain = Array.from({ length: 500 }, (_, i) => `step ${i}`);
    const exact = digestOf(plain.map((line) => `\u001b[1m${line}\u001b[0m`), 100, PIPE_TEXT);
    expect(exact[1]).toBe("⟪×500⟫ step {0..499}");
    expect(unfold([exact[1] as string])).toEqual(plain);
  });

  it("reads a run of one shape as bytes exactly as it reads the same lines one by one", () => {
    // Runs that end mid-chunk, shapes that differ only past their numbers, padded and widening numbers, a line that
    // starts like the run's shape and then differs, CRLF lines: fed as bytes (runs compared with the shape's first
    // line) and as lines (each hashed on its own), the digests are the same.
    let seed = 7;
    const next = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const makers = [
      (i: number) => `${i}`,
      (i: number) => `${i} ${i * 3}`,
      (i: number) => `step ${String(i).padStart(3, "0")}/x`,
      (i: number) => `step ${i}/y`,
      (i: number) => `step ${i}`,
      (i: number) => `${i}.${next(10)}\r`,
      (i: number) => `v${"9".repeat(next(20))}`,
      () => "",
    ];
    const lines: string[] = [];
    for (let i = 0; lines.length < 20_000; i += 1) {
      const make = makers[next(makers.length)]!;
      const length = next(4) === 0 ? 1 + next(5) : 50 + next(500);
      for (let j = 0; j < length; j += 1) lines.push(make(i * 1000 + j));
    }
    const byLine = new MiddleDigest();
    for (const line of lines) byLine.feedLine(line, Buffer.byteLength(line) + 1);
    const expected = byLine.finish();
    for (const chunk of [1, 5, 4096, 65_536]) expect(digestOf(lines, chunk)).toEqual(expected);
  });

  it("takes a line longer than it holds in pieces, and counts it once", () => {
    const lines = ["first", "y".repeat(200_000), "last"];
    for (const chunk of [4096, 65_536]) {
      const digest = digestOf(lines, chunk);
      expect(digest[0]).toContain("omitted 3 lines (200012 bytes)");
      expect(digest).toContain("first");
      expect(digest).toContain("last");
    }
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
    const unread = new UnreadOutput(8192, 8192, PIPE_TEXT);
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
