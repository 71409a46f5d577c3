import { describe, expect, it } from "vitest";
import { createDiagnosticTail, DIAGNOSTIC_TAIL_DEFAULTS } from "../../actors/monitor/diagnostic-tail.ts";

const utf8Bytes = (text: string): number => new TextEncoder().encode(text).length;
type Source = "stdout" | "stderr";
const line = (source: Source, text: string, count = 1, clipped = false) => ({
  source,
  text,
  count,
  clipped,
});

describe("createDiagnosticTail", () => {
  it("starts empty and untruncated", () => {
    expect(createDiagnosticTail().snapshot()).toEqual({ lines: [], truncated: false });
  });

  it("keeps lines in order with their source", () => {
    const tail = createDiagnosticTail();
    tail.push("stdout", "building");
    tail.push("stderr", "warning: x");
    tail.push("stdout", "");
    expect(tail.snapshot()).toEqual({
      lines: [line("stdout", "building"), line("stderr", "warning: x"), line("stdout", "")],
      truncated: false,
    });
  });

  it("uses the documented defaults: 100 lines, 32 KiB, 10 KiB per line", () => {
    expect(DIAGNOSTIC_TAIL_DEFAULTS).toEqual({ maxLines: 100, maxBytes: 32768, maxLineBytes: 10240 });
    const tail = createDiagnosticTail();
    for (let i = 0; i < 150; i++) tail.push("stdout", `line ${i}`);
    const { lines, truncated } = tail.snapshot();
    expect(lines).toHaveLength(100);
    expect(lines[0]?.text).toBe("line 50");
    expect(lines[99]?.text).toBe("line 149");
    expect(truncated).toBe(true);

    const wide = createDiagnosticTail();
    wide.push("stdout", "x".repeat(20_000));
    expect(wide.snapshot().lines[0]?.text).toHaveLength(10240);
    for (let i = 0; i < 3; i++) wide.push("stdout", `${i}`.repeat(10_000));
    // 10,240 + 3 × 10,000 bytes exceed 32 KiB: the clipped first line is evicted, the rest fit.
    expect(wide.snapshot().lines.map((entry) => entry.text[0])).toEqual(["0", "1", "2"]);
  });

  describe("collapsing", () => {
    it("collapses adjacent identical lines into one entry with a count", () => {
      const tail = createDiagnosticTail();
      for (let i = 0; i < 5; i++) tail.push("stderr", "retrying…");
      tail.push("stderr", "gave up");
      expect(tail.snapshot()).toEqual({
        lines: [line("stderr", "retrying…", 5), line("stderr", "gave up")],
        truncated: false,
      });
    });

    it("does not collapse the same text from another source, or non-adjacent repeats", () => {
      const tail = createDiagnosticTail();
      tail.push("stdout", "same");
      tail.push("stderr", "same");
      tail.push("stdout", "same");
      tail.push("stdout", "other");
      tail.push("stdout", "same");
      tail.push("stdout", "same");
      expect(tail.snapshot().lines).toEqual([
        line("stdout", "same"),
        line("stderr", "same"),
        line("stdout", "same"),
        line("stdout", "other"),
        line("stdout", "same", 2),
      ]);
    });

    it("counts a collapsed entry once against the line and byte bounds", () => {
      const tail = createDiagnosticTail({ maxLines: 3, maxBytes: 30 });
      tail.push("stdout", "first");
      for (let i = 0; i < 1000; i++) tail.push("stdout", "0123456789");
      tail.push("stdout", "last");
      expect(tail.snapshot()).toEqual({
        lines: [line("stdout", "first"), line("stdout", "0123456789", 1000), line("stdout", "last")],
        truncated: false,
      });
    });

    it("does not collapse two different long lines that clip to the same text", () => {
      const tail = createDiagnosticTail({ maxLineBytes: 8 });
      tail.push("stdout", "prefix--A");
      tail.push("stdout", "prefix--B");
      tail.push("stdout", "prefix--B");
      expect(tail.snapshot().lines).toEqual([line("stdout", "prefix--", 1, true), line("stdout", "prefix--", 2, true)]);
    });
  });

  describe("bounds", () => {
    it("evicts the oldest entries beyond maxLines and reports truncation", () => {
      const tail = createDiagnosticTail({ maxLines: 2 });
      tail.push("stdout", "a");
      tail.push("stdout", "b");
      expect(tail.snapshot().truncated).toBe(false);
      tail.push("stdout", "c");
      expect(tail.snapshot()).toEqual({ lines: [line("stdout", "b"), line("stdout", "c")], truncated: true });
    });

    it("evicts the oldest entries beyond maxBytes, counting UTF-8 bytes", () => {
      const tail = createDiagnosticTail({ maxBytes: 10 });
      tail.push("stdout", "ééé"); // 6 bytes, 3 code units
      tail.push("stdout", "abcd"); // 4 bytes: exactly 10 in all
      expect(tail.snapshot()).toEqual({ lines: [line("stdout", "ééé"), line("stdout", "abcd")], truncated: false });
      tail.push("stdout", "z");
      expect(tail.snapshot()).toEqual({ lines: [line("stdout", "abcd"), line("stdout", "z")], truncated: true });
    });

    it("clips a long line to maxLineBytes on a code-point boundary and marks it", () => {
      const tail = createDiagnosticTail({ maxLineBytes: 10 });
      tail.push("stdout", "abc€€€"); // 3 + 9 bytes: the third € would cross byte 10
      tail.push("stdout", "😀😀😀"); // 12 bytes: a pair is never split
      tail.push("stdout", "0123456789"); // exactly 10: not clipped
      const { lines, truncated } = tail.snapshot();
      expect(lines).toEqual([
        line("stdout", "abc€€", 1, true),
        line("stdout", "😀😀", 1, true),
        line("stdout", "0123456789"),
      ]);
      expect(truncated).toBe(true);
      expect(lines.every((entry) => utf8Bytes(entry.text) <= 10)).toBe(true);
    });

    it("reports truncation after a clip even when nothing was evicted", () => {
      const tail = createDiagnosticTail({ maxLineBytes: 4 });
      tail.push("stderr", "12345");
      expect(tail.snapshot()).toEqual({ lines: [line("stderr", "1234", 1, true)], truncated: true });
    });

    it("keeps truncation reported after the clipped line itself is evicted", () => {
      const tail = createDiagnosticTail({ maxLines: 1, maxLineBytes: 4 });
      tail.push("stdout", "123456");
      tail.push("stdout", "ok");
      expect(tail.snapshot()).toEqual({ lines: [line("stdout", "ok")], truncated: true });
    });

    it("clips a line to maxBytes when that is the smaller bound, so the newest line always fits", () => {
      const tail = createDiagnosticTail({ maxBytes: 6, maxLineBytes: 100 });
      tail.push("stdout", "old");
      tail.push("stdout", "0123456789");
      expect(tail.snapshot()).toEqual({ lines: [line("stdout", "012345", 1, true)], truncated: true });
    });

    it("counts bytes of the displayed text only, for a huge line", () => {
      const tail = createDiagnosticTail({ maxLines: 10, maxBytes: 40, maxLineBytes: 20 });
      tail.push("stdout", "a");
      tail.push("stdout", "b".repeat(1_000_000));
      tail.push("stdout", "c".repeat(19));
      // 1 + 20 + 19 = 40 bytes: everything still fits.
      expect(tail.snapshot().lines.map((entry) => entry.text.length)).toEqual([1, 20, 19]);
    });

    it("rejects bounds that are not positive integers", () => {
      expect(() => createDiagnosticTail({ maxLines: 0 })).toThrow(RangeError);
      expect(() => createDiagnosticTail({ maxBytes: -1 })).toThrow(RangeError);
      expect(() => createDiagnosticTail({ maxLineBytes: 2.5 })).toThrow(RangeError);
    });
  });

  describe("snapshot(extra)", () => {
    it("appends extra lines to the snapshot without changing the tail", () => {
      const tail = createDiagnosticTail({ maxLines: 3 });
      tail.push("stdout", "a");
      tail.push("stdout", "b");
      const withExtra = tail.snapshot([
        { source: "stdout", text: "b" },
        { source: "stderr", text: "partial err" },
        { source: "stdout", text: "partial out" },
      ]);
      expect(withExtra).toEqual({
        lines: [line("stdout", "b", 2), line("stderr", "partial err"), line("stdout", "partial out")],
        truncated: true,
      });
      expect(tail.snapshot()).toEqual({ lines: [line("stdout", "a"), line("stdout", "b")], truncated: false });
      // And pushing afterwards continues from the unchanged tail.
      tail.push("stdout", "b");
      expect(tail.snapshot().lines).toEqual([line("stdout", "a"), line("stdout", "b", 2)]);
    });

    it("applies the bounds to extra lines", () => {
      const tail = createDiagnosticTail({ maxLineBytes: 3 });
      expect(tail.snapshot([{ source: "stderr", text: "abcdef" }])).toEqual({
        lines: [line("stderr", "abc", 1, true)],
        truncated: true,
      });
      expect(tail.snapshot()).toEqual({ lines: [], truncated: false });
    });

    it("returns lines the caller may change without affecting the tail", () => {
      const tail = createDiagnosticTail();
      tail.push("stdout", "x");
      const first = tail.snapshot();
      (first.lines[0] as { count: number }).count = 99;
      expect(tail.snapshot().lines[0]?.count).toBe(1);
      expect(Object.keys(first.lines[0] ?? {}).sort()).toEqual(["clipped", "count", "source", "text"]);
    });
  });

  describe("against a from-scratch reading of the rules", () => {
    /** Deterministic pseudo-random numbers, so a failure can be replayed. */
    function random(seed: number): () => number {
      let state = seed >>> 0;
      return () => {
        state = (state + 0x6d2b79f5) >>> 0;
        let t = state;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
      };
    }

    const clips = new Map<string, string>();
    /** Whole code points from the start, as many as fit in `maxBytes` (memoized: the alphabets are small). */
    function clipped(text: string, maxBytes: number): string {
      const key = `${maxBytes}:${text}`;
      let shown = clips.get(key);
      if (shown === undefined) {
        const points: string[] = [];
        let used = 0;
        for (const point of text) {
          used += utf8Bytes(point);
          if (used > maxBytes) break;
          points.push(point);
        }
        shown = points.join("");
        clips.set(key, shown);
      }
      return shown;
    }

    /**
     * The rules applied to the whole history at once: runs of equal lines, each clipped on its own; the newest runs
     * that fit both bounds; truncated when anything was clipped or left out.
     */
    function reference(
      history: { source: Source; text: string }[],
      limits: { maxLines: number; maxBytes: number; maxLineBytes: number },
    ) {
      const lineBytes = Math.min(limits.maxLineBytes, limits.maxBytes);
      const runs: { source: Source; full: string; text: string; count: number; clipped: boolean }[] = [];
      for (const { source, text } of history) {
        const last = runs[runs.length - 1];
        if (last !== undefined && last.source === source && last.full === text) {
          last.count++;
          continue;
        }
        const shown = clipped(text, lineBytes);
        runs.push({ source, full: text, text: shown, count: 1, clipped: shown !== text });
      }
      const kept: typeof runs = [];
      let bytes = 0;
      for (let i = runs.length - 1; i >= 0 && kept.length < limits.maxLines; i--) {
        const run = runs[i] as (typeof runs)[number];
        bytes += utf8Bytes(run.text);
        if (bytes > limits.maxBytes) break;
        kept.unshift(run);
      }
      return {
        lines: kept.map(({ source, text, count, clipped }) => line(source, text, count, clipped)),
        truncated: kept.length < runs.length || runs.some((run) => run.clipped),
      };
    }

    const pieces = ["a", "b", "é", "😀", "€uro", "x".repeat(40), "y".repeat(300), "z".repeat(5000)];

    it("gives the same tail and truncation as the reference on random streams", () => {
      const next = random(20261130);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
      for (let trial = 0; trial < 300; trial++) {
        const limits = {
          maxLines: pick([1, 2, 3, 5, 10, 100]),
          maxBytes: pick([6, 30, 100, 1000, 32 * 1024]),
          maxLineBytes: pick([3, 10, 64, 10 * 1024]),
        };
        const tail = createDiagnosticTail(limits);
        const history: { source: Source; text: string }[] = [];
        // A small alphabet of lines, so runs of repeats (and repeats that are not adjacent) are common.
        const alphabet = Array.from({ length: 1 + Math.floor(next() * 6) }, () =>
          Array.from({ length: Math.floor(next() * 3) }, () => pick(pieces)).join(""),
        );
        const length = Math.floor(next() * 400);
        for (let i = 0; i < length; i++) {
          const entry = { source: next() < 0.8 ? ("stdout" as const) : ("stderr" as const), text: pick(alphabet) };
          tail.push(entry.source, entry.text);
          history.push(entry);
          if (next() < 0.05) expect(tail.snapshot()).toEqual(reference(history, limits));
        }
        expect(tail.snapshot()).toEqual(reference(history, limits));
        const extra = Array.from({ length: Math.floor(next() * 4) }, () => ({
          source: next() < 0.5 ? ("stdout" as const) : ("stderr" as const),
          text: pick(alphabet),
        }));
        expect(tail.snapshot(extra)).toEqual(reference([...history, ...extra], limits));
        expect(tail.snapshot()).toEqual(reference(history, limits));
      }
    });

    it("keeps truncation reported once the line bound has dropped a run, whatever comes after", () => {
      const tail = createDiagnosticTail({ maxLines: 3 });
      for (const text of ["a", "b", "c", "d"]) tail.push("stdout", text);
      for (let i = 0; i < 10; i++) tail.push("stdout", "d");
      expect(tail.snapshot()).toEqual({
        lines: [line("stdout", "b"), line("stdout", "c"), line("stdout", "d", 11)],
        truncated: true,
      });
    });

    it("a run that no longer fits the byte bound stays out when later runs are small", () => {
      const tail = createDiagnosticTail({ maxLines: 10, maxBytes: 10 });
      tail.push("stdout", "old");
      tail.push("stdout", "123456789");
      tail.push("stdout", "z");
      // "old" was evicted by the 9-byte line; "z" alone fits beside it, and "old" does not come back.
      expect(tail.snapshot()).toEqual({ lines: [line("stdout", "123456789"), line("stdout", "z")], truncated: true });
    });
  });
});
