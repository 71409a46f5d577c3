import { describe, expect, it } from "vitest";
import { EVIDENCE_SHAPES, isEvidence } from "../../shared/evidence.ts";
import { foldLines, type FoldMode } from "../../shared/fold.ts";
import { unfold } from "../fixtures/unfold.ts";

/** A small deterministic generator, so that a failing case can be replayed from its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const NOISE = ["step {n}: ok", "[build] compiled src/module_{n}.ts in {r} ms", "check {p}: verified", "row {r},{n},{r}", "same line", "progress {n}%"];
const EVIDENCE = ["error: cannot find module 'x'", "FAIL tests/a.test.ts", "Traceback (most recent call last):", "npm ERR! code 1", "warning: unused variable"];

/** Runs of lines shaped like real noise, with evidence and odd lines between them. */
function output(seed: number): string[] {
  const next = random(seed);
  const lines: string[] = [];
  while (lines.length < 400) {
    const kind = next();
    if (kind < 0.1) lines.push(EVIDENCE[Math.floor(next() * EVIDENCE.length)] as string);
    else if (kind < 0.15) lines.push(`⟪ a line that looks like a fold ⟫ ${Math.floor(next() * 9)}`);
    else if (kind < 0.2) lines.push(`{${Math.floor(next() * 5)}..9} braces`);
    else {
      const template = NOISE[Math.floor(next() * NOISE.length)] as string;
      const start = Math.floor(next() * 1000);
      const run = 1 + Math.floor(next() * 40);
      for (let i = 0; i < run; i += 1) {
        lines.push(
          template
            .replaceAll("{n}", String(start + i))
            .replaceAll("{p}", String(start + i).padStart(5, "0"))
            .replaceAll("{r}", String(Math.floor(next() * 100))),
        );
      }
    }
  }
  return lines;
}

const length = (lines: readonly string[]): number => lines.reduce((sum, line) => sum + line.length + 1, 0);

describe("folding", () => {
  it("folds a counting run into its first line and one exact fold", () => {
    const lines = Array.from({ length: 50 }, (_, i) => `[stdout] step ${i + 1}: ok`);
    const folded = foldLines(lines, { mode: "even", keepLast: 0 });
    expect(folded.lines).toEqual(["[stdout] step 1: ok", "⟪×49⟫ [stdout] step {2..50}: ok"]);
    expect(folded.foldedLines).toBe(49);
  });

  it("says a repeated line once with its count, and steps other than one", () => {
    expect(foldLines(Array(37).fill("retrying…"), { mode: "even", keepLast: 0 }).lines).toEqual(["retrying…", "⟪×36⟫ retrying…"]);
    const evens = Array.from({ length: 20 }, (_, i) => `offset ${i * 4096}`);
    expect(foldLines(evens, { mode: "even", keepLast: 0 }).lines).toEqual(["offset 0", "⟪×19⟫ offset {4096..77824..4096}"]);
  });

  it("keeps zero-padding, as bash does", () => {
    const lines = Array.from({ length: 12 }, (_, i) => `frame ${String(i + 1).padStart(3, "0")}.png`);
    const folded = foldLines(lines, { mode: "even", keepLast: 0 });
    expect(folded.lines[1]).toBe("⟪×11⟫ frame {002..012}.png");
    expect(unfold(folded.lines)).toEqual(lines);
  });

  it("leaves figures that do not count evenly as they are, unless told it may list or bound them", () => {
    const figures = Array.from({ length: 30 }, (_, i) => `row ${(i * 7919) % 101},${(i * 31) % 7}`);
    expect(foldLines(figures, { mode: "even", keepLast: 0 }).lines).toEqual(figures);
    const exact = foldLines(figures, { mode: "exact", keepLast: 0 });
    expect(unfold(exact.lines)).toEqual(figures);
    const lossy = foldLines(figures, { mode: "lossy", keepLast: 0 });
    expect(lossy.lines[1]).toMatch(/^⟪~×29⟫ row \{~\d+\.\.\d+\},\{~\d+\.\.\d+\}$/);
  });

  it("never folds evidence, the lines a caller keeps, or the last lines", () => {
    const lines = [...Array.from({ length: 10 }, (_, i) => `test ${i} passed`), "test 10 FAILED", ...Array.from({ length: 10 }, (_, i) => `test ${i + 11} passed`)];
    const folded = foldLines(lines, { mode: "even", keepLast: 3, keep: (line) => line === "test 5 passed" });
    expect(folded.lines).toContain("test 10 FAILED");
    expect(folded.lines).toContain("test 5 passed");
    expect(folded.lines.slice(-3)).toEqual(["test 18 passed", "test 19 passed", "test 20 passed"]);
    expect(unfold(folded.lines)).toEqual(lines);
  });

  it("marks a program line that begins like a fold, so it cannot be read as one", () => {
    const lines = ["⟪×3⟫ not a fold", "plain"];
    const folded = foldLines(lines, { mode: "even", keepLast: 0 });
    expect(folded.lines[0]).toBe("⟪⟫⟪×3⟫ not a fold");
    expect(unfold(folded.lines)).toEqual(lines);
  });

  for (const mode of ["even", "exact"] as FoldMode[]) {
    it(`${mode}: unfolding gives back the exact lines, no evidence is folded, and it never grows (property, 200 seeds)`, () => {
      for (let seed = 1; seed <= 200; seed += 1) {
        const lines = output(seed);
        const folded = foldLines(lines, { mode, keepLast: 5 });
        expect(unfold(folded.lines), `seed ${seed}`).toEqual(lines);
        const verbatim = folded.lines.filter((line) => !/^⟪~?×\d+⟫ /.test(line));
        for (const line of lines.filter(isEvidence)) expect(verbatim, `seed ${seed}`).toContain(line);
        // Escaping a line that begins with ⟪ costs two characters; nothing else may grow.
        const escaped = lines.filter((line) => line.startsWith("⟪")).length * 2;
        expect(length(folded.lines), `seed ${seed}`).toBeLessThanOrEqual(length(lines) + escaped);
      }
    });
  }

  it("lossy: every fold is marked, and no evidence line is folded (property)", () => {
    for (let seed = 1; seed <= 100; seed += 1) {
      const lines = output(seed);
      const folded = foldLines(lines, { mode: "lossy", keepLast: 5 });
      for (const line of lines.filter(isEvidence)) expect(folded.lines).toContain(line);
      for (const fold of folded.lines.filter((line) => line.includes("{~"))) expect(fold.startsWith("⟪~×")).toBe(true);
    }
  });
});

describe("evidence shapes", () => {
  const cases: [string, string][] = [
    ["error", "src/a.ts(3,5): error TS2322: Type 'string' is not assignable"],
    ["error", "TypeError: Cannot read properties of undefined"],
    ["failure", " FAIL  tests/unit/parser.test.ts"],
    ["warning", "npm WARN deprecated glob@7.2.3"],
    ["panic", "thread 'main' panicked at src/main.rs:4:5"],
    ["traceback", "Traceback (most recent call last):"],
    ["traceback", "    at Object.<anonymous> (/app/index.js:3:9)"],
    ["npm", "npm ERR! code ELIFECYCLE"],
    ["cross mark", "   × parses nested arrays"],
    ["cross mark", "✗ build failed"],
    ["assertion", "AssertionError: expected 1 to equal 2"],
    ["exit", "process exited with code 137"],
    ["exit", "Segmentation fault (core dumped)"],
    ["denied", "bash: ./run.sh: Permission denied"],
  ];
  it.each(cases)("%s: %s", (name, line) => {
    const shape = EVIDENCE_SHAPES.find((candidate) => candidate.name === name);
    expect(shape?.pattern.test(line)).toBe(true);
    expect(isEvidence(line)).toBe(true);
  });
  it.each(["[build] step 4/2000: compiled src/module_4.ts in 12 ms", "step 7: ok", "check 00012: verified", "Done in 2.3s", "2× faster than before"])(
    "not evidence: %s",
    (line) => expect(isEvidence(line)).toBe(false),
  );
});
