import { describe, expect, it } from "vitest";
import { EVIDENCE_SHAPES, isEvidence } from "../../shared/evidence.ts";
import { EVIDENCE_HEAD, foldLines, type FoldMode } from "../../shared/fold.ts";
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
/** Evidence that comes in runs of one shape: a compiler's errors, a linter's warnings, a repeated failure. */
const EVIDENCE_RUNS = ["src/f_{n}.ts({r},{r}): error TS2339: Property p{r} does not exist", "warning: {n} unused imports", "FAIL tests/t.test.ts", "E{p}: assertion {n} failed"];

/** Runs of lines shaped like real noise, with evidence and odd lines between them. */
function output(seed: number): string[] {
  const next = random(seed);
  const lines: string[] = [];
  while (lines.length < 400) {
    const kind = next();
    if (kind < 0.1) lines.push(EVIDENCE[Math.floor(next() * EVIDENCE.length)] as string);
    else if (kind < 0.2) lines.push(...run(EVIDENCE_RUNS, next));
    else if (kind < 0.25) lines.push(`⟪ a line that looks like a fold ⟫ ${Math.floor(next() * 9)}`);
    else if (kind < 0.3) lines.push(`{${Math.floor(next() * 5)}..9} braces`);
    else lines.push(...run(NOISE, next));
  }
  return lines;
}

/** 1 to 40 lines of one of `templates`: `{n}` counts, `{p}` counts zero-padded, `{r}` is random. */
function run(templates: readonly string[], next: () => number): string[] {
  const template = templates[Math.floor(next() * templates.length)] as string;
  const start = Math.floor(next() * 1000);
  const length = 1 + Math.floor(next() * 40);
  return Array.from({ length }, (_, i) =>
    template
      .replaceAll("{n}", String(start + i))
      .replaceAll("{p}", String(start + i).padStart(5, "0"))
      .replaceAll("{r}", String(Math.floor(next() * 100))),
  );
}

const skeleton = (line: string): string => line.replace(/\d+/g, "#");

/** The indices of the input lines that `folded` shows verbatim (every fold says how many lines it stands for). */
function verbatimIndices(folded: readonly string[]): Set<number> {
  const shown = new Set<number>();
  let at = 0;
  for (const line of folded) {
    const fold = /^⟪~?×(\d+)⟫ /.exec(line);
    if (fold === null) shown.add(at);
    at += fold === null ? 1 : Number(fold[1]);
  }
  return shown;
}

/**
 * The evidence lines the rule keeps verbatim: in each run of evidence of one shape (among the lines that may fold),
 * the first EVIDENCE_HEAD and the last; the last `keepLast` lines keep everything.
 */
function evidenceKept(lines: readonly string[], keepLast: number): number[] {
  const foldable = lines.length - keepLast;
  const kept: number[] = [];
  let i = 0;
  while (i < lines.length) {
    if (i >= foldable || !isEvidence(lines[i] as string)) {
      if (i >= foldable) kept.push(i);
      i += 1;
      continue;
    }
    let end = i + 1;
    while (end < foldable && isEvidence(lines[end] as string) && skeleton(lines[end] as string) === skeleton(lines[i] as string)) end += 1;
    for (let k = i; k < Math.min(end, i + EVIDENCE_HEAD); k += 1) kept.push(k);
    kept.push(end - 1);
    i = end;
  }
  return kept;
}

/** Every distinct shape of evidence has a verbatim line, and so do the lines the rule keeps. */
function expectEvidenceShown(lines: readonly string[], folded: readonly string[], keepLast: number, seed: number): void {
  const shown = verbatimIndices(folded);
  for (const index of evidenceKept(lines, keepLast)) expect(shown.has(index), `seed ${seed}, line ${index}`).toBe(true);
  const verbatimShapes = new Set([...shown].map((index) => skeleton(lines[index] as string)));
  for (const line of lines.filter(isEvidence)) expect(verbatimShapes.has(skeleton(line)), `seed ${seed}: ${line}`).toBe(true);
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

  it("never folds a lone evidence line, the lines a caller keeps, or the last lines", () => {
    const lines = [...Array.from({ length: 10 }, (_, i) => `test ${i} passed`), "test 10 FAILED", ...Array.from({ length: 10 }, (_, i) => `test ${i + 11} passed`)];
    const folded = foldLines(lines, { mode: "even", keepLast: 3, keep: (line) => line === "test 5 passed" });
    expect(folded.lines).toContain("test 10 FAILED");
    expect(folded.lines).toContain("test 5 passed");
    expect(folded.lines.slice(-3)).toEqual(["test 18 passed", "test 19 passed", "test 20 passed"]);
    expect(unfold(folded.lines)).toEqual(lines);
  });

  it("folds a long run of one evidence shape between its first three lines and its last", () => {
    const errors = Array.from(
      { length: 10_000 },
      (_, i) => `src/pkg_${i % 97}/file_${(i * 7919) % 10007}.ts(${(i * 31) % 400 + 1},${(i * 17) % 80 + 1}): error TS23${String(i % 50).padStart(2, "0")}: Property p${i % 1000} does not exist on type T${i % 100}.`,
    );
    const lossy = foldLines([...errors, "__FAILED__"], { mode: "lossy", keepLast: 1 });
    expect(lossy.lines).toEqual([
      ...errors.slice(0, 3),
      "⟪~×9996⟫ src/pkg_{~0..96}/file_{~1..10006}.ts({~1..400},{~1..80}): error TS{~2300..2349}: Property p{~0..999} does not exist on type T{~0..99}.",
      errors[9999],
      "__FAILED__",
    ]);
    expect(lossy.foldedLines).toBe(9996);
    // Exact: a fold that lists the values, and gives the lines back.
    const exact = foldLines(errors.slice(0, 200), { mode: "exact", keepLast: 0 });
    expect(exact.lines).toHaveLength(5);
    expect(unfold(exact.lines)).toEqual(errors.slice(0, 200));
    // Even: only a run that repeats or counts evenly.
    expect(foldLines(errors.slice(0, 200), { mode: "even", keepLast: 0 }).lines).toEqual(errors.slice(0, 200));
    const warnings = Array(50).fill("warning: deprecated API");
    expect(foldLines(warnings, { mode: "even", keepLast: 0 }).lines).toEqual([...warnings.slice(0, 3), "⟪×46⟫ warning: deprecated API", "warning: deprecated API"]);
  });

  it("keeps every shape of evidence: a run of one shape ends where another shape or noise begins", () => {
    const lines = [
      ...Array.from({ length: 8 }, (_, i) => `error: module_${i} not found`),
      ...Array.from({ length: 8 }, (_, i) => `warning: ${i} unused imports`),
      ...Array.from({ length: 8 }, (_, i) => `compiled module_${i}`),
      ...Array.from({ length: 8 }, (_, i) => `error: module_${i + 8} not found`),
    ];
    const folded = foldLines(lines, { mode: "exact", keepLast: 0 });
    expect(folded.lines).toEqual([
      ...lines.slice(0, 3),
      "⟪×4⟫ error: module_{3..6} not found",
      lines[7],
      ...lines.slice(8, 11),
      "⟪×4⟫ warning: {3..6} unused imports",
      lines[15],
      lines[16],
      "⟪×7⟫ compiled module_{1..7}",
      ...lines.slice(24, 27),
      "⟪×4⟫ error: module_{11..14} not found",
      lines[31],
    ]);
    expect(unfold(folded.lines)).toEqual(lines);
  });

  it("marks a program line that begins like a fold, so it cannot be read as one", () => {
    const lines = ["⟪×3⟫ not a fold", "plain"];
    const folded = foldLines(lines, { mode: "even", keepLast: 0 });
    expect(folded.lines[0]).toBe("⟪⟫⟪×3⟫ not a fold");
    expect(unfold(folded.lines)).toEqual(lines);
  });

  for (const mode of ["even", "exact"] as FoldMode[]) {
    it(`${mode}: unfolding gives back the exact lines, every shape of evidence keeps a verbatim line, and it never grows (property, 200 seeds)`, () => {
      let foldedEvidence = 0;
      for (let seed = 1; seed <= 200; seed += 1) {
        const lines = output(seed);
        const folded = foldLines(lines, { mode, keepLast: 5 });
        expect(unfold(folded.lines), `seed ${seed}`).toEqual(lines);
        expectEvidenceShown(lines, folded.lines, 5, seed);
        // Escaping a line that begins with ⟪ costs two characters; nothing else may grow.
        const escaped = lines.filter((line) => line.startsWith("⟪")).length * 2;
        expect(length(folded.lines), `seed ${seed}`).toBeLessThanOrEqual(length(lines) + escaped);
        const shown = verbatimIndices(folded.lines);
        foldedEvidence += lines.filter((line, i) => isEvidence(line) && !shown.has(i)).length;
      }
      // The runs of evidence the outputs hold do fold: the property is not met by keeping everything.
      expect(foldedEvidence).toBeGreaterThan(100);
    });
  }

  it("lossy: every fold is marked, every shape of evidence keeps a verbatim line, and it never grows (property)", () => {
    for (let seed = 1; seed <= 100; seed += 1) {
      const lines = output(seed);
      const folded = foldLines(lines, { mode: "lossy", keepLast: 5 });
      expectEvidenceShown(lines, folded.lines, 5, seed);
      for (const fold of folded.lines.filter((line) => line.includes("{~"))) expect(fold.startsWith("⟪~×")).toBe(true);
      const escaped = lines.filter((line) => line.startsWith("⟪")).length * 2;
      expect(length(folded.lines), `seed ${seed}`).toBeLessThanOrEqual(length(lines) + escaped);
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
