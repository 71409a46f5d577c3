import { describe, expect, it } from "vitest";
import { EvidenceScan } from "../../actors/output/evidence-scan.ts";
import { ShapeGroups } from "../../actors/output/shape-groups.ts";
import type { Evidence } from "../../mailbox/evidence.ts";
import { evidenceLines, firstError, LINE_EVIDENCE, REPORT_EVIDENCE } from "../../host/evidence-text.ts";
import { isEvidence } from "../../shared/evidence.ts";
import { unfold } from "../fixtures/unfold.ts";

const enc = new TextEncoder();

/** The evidence of `text` fed in chunks of `chunk` bytes, cut anywhere (inside lines and characters). */
function evidenceOf(text: string, chunk = 4096, source: "stdout" | "stderr" = "stdout"): Evidence {
  const scan = new EvidenceScan();
  const bytes = enc.encode(text);
  for (let at = 0; at < bytes.length; at += chunk) {
    const piece = bytes.subarray(at, at + chunk);
    scan.feed(source, piece, piece.filter((byte) => byte === 10).length);
  }
  scan.finish();
  return scan.log.snapshot();
}

const all = (evidence: Evidence): string[] => evidence.blocks.flatMap((block) => block.lines);

/** A deterministic pseudo-random generator, so a failing seed can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state ^ (state >>> 15), 2246822507) + 0x6d2b79f5) >>> 0;
    return state / 2 ** 32;
  };
}

describe("a job's evidence", () => {
  it("keeps make's first error near the start with its header, code frame, caret and note, and its line in the log", () => {
    const lines = ["gcc -Wall -O1 -c f001.c -o o/f001.o"];
    lines.push(
      "f101.c: In function 'f101':",
      "f101.c:2:14: error: 'undefined_symbol' undeclared (first use in this function)",
      "    2 |   return undefined_symbol;",
      "      |          ^~~~~~~~~~~~~~~~",
      "f101.c:2:14: note: each undeclared identifier is reported only once for each function it appears in",
    );
    for (let i = 2; i < 120; i++) lines.push(`gcc -Wall -O1 -c f${String(i).padStart(3, "0")}.c -o o/f${i}.o`);
    lines.push("make: Target 'all' not remade because of errors.");
    for (const chunk of [1, 7, 4096]) {
      const evidence = evidenceOf(lines.map((line) => `${line}\n`).join(""), chunk);
      expect(evidence.blocks[0]).toEqual({
        line: 2,
        headline: "f101.c:2:14: error: 'undefined_symbol' undeclared (first use in this function)",
        lines: [
          "2: f101.c: In function 'f101':",
          "3: f101.c:2:14: error: 'undefined_symbol' undeclared (first use in this function)",
          "4:     2 |   return undefined_symbol;",
          "5:       |          ^~~~~~~~~~~~~~~~",
          "6: f101.c:2:14: note: each undeclared identifier is reported only once for each function it appears in",
        ],
      });
      expect(evidence.count).toBe(2);
      expect(firstError(evidence)).toBe("line 2: f101.c:2:14: error: 'undefined_symbol' undeclared (first use in this function)");
    }
  });

  it("joins pytest's failure lines across a blank line, and leaves vitest's neighbouring test lines out", () => {
    const pytest = ["    def test_planted_1():", "        total = sum([10, 31])", ">       assert total == 42", "E       assert 41 == 42", "", "test_mod_03.py:55: AssertionError", "_____ test_planted_2 _____", "", "    def test_planted_2():"];
    expect(all(evidenceOf(pytest.map((line) => `${line}\n`).join("")))).toEqual([
      "3: >       assert total == 42",
      "4: E       assert 41 == 42",
      "5: ",
      "6: test_mod_03.py:55: AssertionError",
    ]);
    const vitest = [" ✓ orders > case 050 0ms", " × orders > test_planted_1 14ms", "   → expected 41 to be 42 // Object.is equality", " ✓ orders > case 052 0ms", " ✓ orders > case 053 0ms"];
    expect(all(evidenceOf(vitest.map((line) => `${line}\n`).join("")))).toEqual([
      "2:  × orders > test_planted_1 14ms",
      "3:    → expected 41 to be 42 // Object.is equality",
    ]);
  });

  it("a warning at column 0 does not take vitest's one-space lines after it, nor hide a failure among them", () => {
    const lines = [
      "(node:10726) Warning: The 'NO_COLOR' env is ignored due to the 'FORCE_COLOR' env being set.",
      "(Use `node --trace-warnings ...` to show where the warning was created)",
      ...Array.from({ length: 40 }, (_, i) => ` ✓ carts.test.mjs > carts > case ${i} 0ms`),
      " × carts.test.mjs > carts > test_planted_3 1ms",
      "   → Cannot read properties of undefined (reading 'price')",
      " ✓ carts.test.mjs > carts > case 41 0ms",
    ];
    expect(all(evidenceOf(lines.map((line) => `${line}\n`).join("")))).toEqual([
      `1: ${lines[0]}`,
      `2: ${lines[1]}`,
      `43: ${lines[42]}`,
      `44: ${lines[43]}`,
    ]);
  });

  it("keeps vitest's failure whole: its diff and its location, indented from the error line at column 0", () => {
    const lines = [
      " FAIL  users.test.mjs > users > test_planted_2",
      "AssertionError: expected { id: 7, name: 'eve' } to deeply equal { id: 7, name: 'ada' }",
      "",
      "- Expected",
      "+ Received",
      "",
      "  {",
      '    "id": 7,',
      '-   "name": "ada",',
      '+   "name": "eve",',
      "  }",
      "",
      " ❯ users.test.mjs:160:18",
      "    160|     expect(user).toEqual({ id: 7, name: \"ada\" });",
      "       |                  ^",
      "",
      "⎯⎯⎯⎯⎯⎯⎯⎯[3/3]⎯",
    ];
    const shown = all(evidenceOf(lines.map((line) => `${line}\n`).join("")));
    expect(shown).toContain('10: +   "name": "eve",');
    expect(shown).toContain("13:  ❯ users.test.mjs:160:18");
    expect(shown.at(-1)).toBe("15:        |                  ^");
  });

  it("keeps a traceback whole, with the log line before it and its final exception, in a run of thousands of lines", () => {
    const lines: string[] = [];
    for (let i = 0; i < 6000; i++) {
      lines.push(`2026-12-07 10:00:${String(i % 60).padStart(2, "0")} INFO service: handled request ${i} in ${i % 90} ms`);
      if (i === 3000) {
        lines.push(
          "2026-12-07 10:00:00 ERROR service: failed to handle order 42",
          "Traceback (most recent call last):",
          '  File "/app/service.py", line 40, in handle',
          "    ratio = total / count",
          "ZeroDivisionError: division by zero",
        );
      }
    }
    const evidence = evidenceOf(lines.map((line) => `${line}\n`).join(""), 65_536);
    expect(all(evidence)).toEqual([
      "3002: 2026-12-07 10:00:00 ERROR service: failed to handle order 42",
      "3003: Traceback (most recent call last):",
      '3004:   File "/app/service.py", line 40, in handle',
      "3005:     ratio = total / count",
      "3006: ZeroDivisionError: division by zero",
    ]);
  });

  it("renders colours, cursor codes and \\r progress away; the line numbers stay", () => {
    const text = "\u001b[2K\rbuilding 10%\rbuilding 100%\n\u001b[31m\u001b[1mFAIL\u001b[22m\u001b[39m  tests/a.test.ts > adds\n";
    expect(all(evidenceOf(text, 3))).toEqual(["2: FAIL  tests/a.test.ts > adds"]);
  });

  it("groups 10,000 errors of one shape: the first three, one fold with the count and ranges, the last", () => {
    const lines = Array.from({ length: 10_000 }, (_, i) => `src/pkg_${i}/file_${i}.ts(${(i % 90) + 1},${(i % 40) + 1}): error TS23${(i % 90) + 10}: Property p${i} does not exist on type T${i}.`);
    const evidence = evidenceOf(`${lines.join("\n")}\n__FAILED__\n`, 65_536);
    const shown = evidenceLines(evidence, REPORT_EVIDENCE);
    expect(shown.slice(0, 3)).toEqual(lines.slice(0, 3).map((line, i) => `${i + 1}: ${line}`));
    expect(shown[3]).toMatch(/^⟪~×9996⟫ \{4\.\.9999\}: src\/pkg_\{3\.\.9998\}\/file_\{3\.\.9998\}\.ts/);
    expect(shown[4]).toBe(`10000: ${lines[9999]}`);
    expect(shown).toContain("10001: __FAILED__");
    expect(evidence.count).toBe(10_001);
    expect(shown.join("\n").length).toBeLessThan(1200);
  });

  it("costs one comparison for a chunk that repeats one line, and still finds an error after it", () => {
    const flood = `${"a".repeat(99)}\n`.repeat(20_000);
    const evidence = evidenceOf(`${flood}Segmentation fault (core dumped)\n`, 65_536);
    expect(all(evidence)).toEqual(["20001: Segmentation fault (core dumped)"]);
  });

  it("reads a stretch of digits and punctuation word by word, and still numbers the error after it right", () => {
    const counter = Array.from({ length: 5000 }, (_, i) => `${i + 1}, ${(i * 7) % 13}.5`);
    for (const chunk of [1, 7, 4096, 65_536]) {
      const evidence = evidenceOf(`${counter.join("\n")}\nError: disk full\n    at write (/app/io.js:3:9)\n`, chunk);
      expect(all(evidence), `chunks of ${chunk}`).toEqual(["5001: Error: disk full", "5002:     at write (/app/io.js:3:9)"]);
    }
  });

  it("past 20 blocks and its budget, says how many more there were and shows the last one", () => {
    const lines: string[] = [];
    // Three plain lines between two errors: more than a block's gap, so each error is a block of its own.
    for (let i = 0; i < 60; i++) lines.push(`step ${i} ok`, `step ${i} checked`, "", `${"abcdefghij"[i % 10]!.repeat(3)} ${"x".repeat(i % 7)}: error in stage ${i}`);
    const evidence = evidenceOf(lines.map((line) => `${line}\n`).join(""));
    expect(evidence.blocks.length).toBe(21);
    expect(evidence.omitted).toBe(39);
    const shown = evidenceLines(evidence, REPORT_EVIDENCE);
    const marker = shown.find((line) => line.startsWith("⟪") && line.includes("more error-like block"));
    expect(marker).toMatch(/^⟪\d+ more error-like blocks; the last of them:⟫$/);
    expect(shown.at(-1)).toBe(`240: ${lines[239]}`);
    const few = evidenceLines(evidence, LINE_EVIDENCE);
    expect(few.length).toBeLessThan(shown.length);
    expect(few.at(-1)).toBe(`240: ${lines[239]}`);
  });

  it("has nothing to say about a run that printed nothing error-like", () => {
    const evidence = evidenceOf(Array.from({ length: 500 }, (_, i) => `step ${i}: compiled module_${i}`).join("\n"));
    expect(evidence).toEqual({ count: 0, blocks: [], omitted: 0 });
    expect(evidenceLines(evidence, REPORT_EVIDENCE)).toEqual([]);
    expect(firstError(evidence)).toBeNull();
  });

  it("every distinct error shape keeps a verbatim line, exact folds decode, and the shown text stays bounded (property, 100 seeds)", () => {
    const kinds = [
      (n: number) => `src/m${n}.ts(${n},1): error TS2339: Property p${n} does not exist`,
      (n: number) => `FAILED tests/test_${n}.py::test_case_${n} - assert ${n} == ${n + 1}`,
      (n: number) => `warning: unused variable x${n}`,
      (n: number) => `npm ERR! code E${n}`,
      (n: number) => `thread 'main' panicked at src/lib.rs:${n}:5`,
    ];
    for (let seed = 1; seed <= 100; seed += 1) {
      const next = random(seed);
      const lines: string[] = [];
      const used = new Set<number>();
      for (let i = 0; i < 400; i++) {
        if (next() < 0.6) {
          lines.push(`noise line ${i} value=${Math.floor(next() * 1000)}`);
          continue;
        }
        const kind = Math.floor(next() * kinds.length);
        used.add(kind);
        lines.push(kinds[kind]!(i));
      }
      const evidence = evidenceOf(lines.map((line) => `${line}\n`).join(""), 1 + Math.floor(next() * 5000));
      const shown = evidenceLines(evidence, REPORT_EVIDENCE);
      const verbatim = shown.filter((line) => !line.startsWith("⟪"));
      for (const kind of used) {
        const probe = kinds[kind]!(7).replace(/\d+/g, "");
        expect(verbatim.some((line) => line.replace(/\d+/g, "").endsWith(probe)), `seed ${seed} kind ${kind}`).toBe(true);
      }
      for (const fold of shown.filter((line) => /^⟪×\d+⟫ /.test(line))) {
        for (const line of unfold([fold])) expect(lines, `seed ${seed}`).toContain(line.replace(/^\d+: /, ""));
      }
      expect(evidence.count).toBe(lines.filter(isEvidence).length);
      // The budget bounds what precedes the last block; the last block and the markers come on top.
      expect(shown.join("\n").length, `seed ${seed}`).toBeLessThan(REPORT_EVIDENCE.chars + 2_000);
    }
  });
});

describe("shape groups", () => {
  it("keep the first lines of a shape, then one fold that decodes to the lines it stands for, then the last", () => {
    const groups = new ShapeGroups(2);
    const lines = Array.from({ length: 8 }, (_, i) => `chunk ${i} failed`);
    const counted = lines.map((line) => groups.add(line));
    expect(counted.slice(0, 2)).toEqual([null, null]);
    const group = counted[2]!;
    expect(counted.slice(3).every((g) => g === group)).toBe(true);
    const written = groups.lines(group);
    expect(written).toEqual(["⟪×5⟫ chunk {2..6} failed", "chunk 7 failed"]);
    expect(unfold(written)).toEqual(lines.slice(2));
  });
});
