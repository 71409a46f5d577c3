/**
 * The retained output window (actors/output/window.ts) keeps its bytes in one reused buffer (actors/output/byte-ring.ts):
 * checked against a window that keeps every chunk itself (decoded the same way), on random output — lines of every
 * length, both sources, chunks cut anywhere, more than the window holds — and the ring on its own against a plain
 * array of bytes.
 */
import { describe, expect, it } from "vitest";
import { ByteRing } from "../../actors/output/byte-ring.ts";
import { countNewlines } from "../../actors/output/framing.ts";
import { createOutputWindow, decodeWindow, newestThatFit } from "../../actors/output/window.ts";
import type { RetainedLine, RetainedWindow } from "../../mailbox/output.ts";
import type { SourceName } from "../../mailbox/constants.ts";

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** The window's keeping rules with every chunk kept as it came, no ring. */
function referenceWindow(options: { maxBytes: number; maxLines: number }) {
  const chunks: { source: SourceName; payload: Uint8Array; lines: number }[] = [];
  let bytes = 0;
  let lines = 0;
  let evictedBytes = 0;
  let evictedLines = 0;
  return {
    feed(source: SourceName, payload: Uint8Array, lineCount: number) {
      if (payload.length === 0) return;
      chunks.push({ source, payload: Uint8Array.from(payload), lines: lineCount });
      bytes += payload.length;
      lines += lineCount;
      while (chunks.length > 1) {
        const old = chunks[0]!;
        if (bytes - old.payload.length < options.maxBytes * 2 && lines - old.lines < options.maxLines * 2) break;
        chunks.shift();
        bytes -= old.payload.length;
        lines -= old.lines;
        evictedBytes += old.payload.length;
        evictedLines += old.lines;
      }
    },
    read(): RetainedWindow {
      // The same decoding (tested through the window below); only where the bytes are kept differs.
      const visit = (push: (source: SourceName, piece: Uint8Array) => void): void => {
        for (const chunk of chunks) push(chunk.source, chunk.payload);
      };
      return decodeWindow(visit, { bytes: evictedBytes, lines: evictedLines }, options);
    },
  };
}

describe("ByteRing", () => {
  it("keeps exactly the bytes appended and not dropped, across growth and wrap-around", () => {
    const next = random(7);
    const ring = new ByteRing();
    let kept: number[] = [];
    let first = 0;
    for (let step = 0; step < 3000; step += 1) {
      const size = Math.floor(next() * (next() < 0.05 ? 70_000 : 3000));
      const bytes = Uint8Array.from({ length: size }, (_, i) => (step * 31 + i) & 0xff);
      const at = ring.append(bytes);
      expect(at).toBe(first + kept.length);
      for (const byte of bytes) kept.push(byte);
      if (next() < 0.5 && kept.length > 0) {
        const drop = Math.floor(next() * kept.length);
        ring.dropBefore(first + drop);
        kept = kept.slice(drop);
        first += drop;
      }
      expect(ring.length).toBe(kept.length);
      if (step % 50 === 0 && kept.length > 0) {
        const from = first + Math.floor(next() * kept.length);
        const to = from + Math.floor(next() * (first + kept.length - from));
        const read: number[] = [];
        ring.read(from, to, (piece) => {
          for (const byte of piece) read.push(byte);
        });
        expect(read).toEqual(kept.slice(from - first, to - first));
      }
    }
    expect(() => ring.read(first - 1, first, () => {})).toThrow(RangeError);
  });
});

describe("the output window", () => {
  it("reads exactly as the window that kept every chunk", () => {
    const words = ["ok", "error: something failed", "é€😀", "\r", "", "x".repeat(12_000)];
    for (let seed = 1; seed <= 24; seed += 1) {
      const next = random(seed);
      const options = seed % 2 === 0 ? { maxBytes: 4096, maxLines: 40 } : { maxBytes: 256 * 1024, maxLines: 2000 };
      const window = createOutputWindow(options);
      const reference = referenceWindow(options);
      for (let chunkIndex = 0; chunkIndex < 100; chunkIndex += 1) {
        const parts: string[] = [];
        const count = Math.floor(next() * 200);
        for (let i = 0; i < count; i += 1) parts.push(words[Math.floor(next() * words.length)]!, next() < 0.8 ? "\n" : "");
        const bytes = Buffer.from(parts.join(""));
        const cut = Math.floor(next() * (bytes.length + 1));
        const source: SourceName = next() < 0.7 ? "stdout" : "stderr";
        for (const piece of [bytes.subarray(0, cut), bytes.subarray(cut)]) {
          window.feed(source, piece, countNewlines(piece));
          reference.feed(source, piece, countNewlines(piece));
        }
        if (chunkIndex % 20 === 19) expect(window.read(), `seed ${seed}, chunk ${chunkIndex}`).toEqual(reference.read());
      }
    }
  });

  it("shows the newest lines that fit both bounds and counts the rest", () => {
    const line = (text: string): RetainedLine => ({ source: "stdout", text });
    const lines = ["one", "two", "three", "é€"].map(line);
    // Bytes: "one\n" 4, "two\n" 4, "three\n" 6, "é€\n" 6 (é is 2 bytes, € is 3).
    expect(newestThatFit(lines, { maxBytes: 1000, maxLines: 2 })).toEqual({ lines: lines.slice(2), droppedLines: 2, droppedBytes: 8 });
    expect(newestThatFit(lines, { maxBytes: 12, maxLines: 10 })).toEqual({ lines: lines.slice(2), droppedLines: 2, droppedBytes: 8 });
    expect(newestThatFit(lines, { maxBytes: 11, maxLines: 10 })).toEqual({ lines: lines.slice(3), droppedLines: 3, droppedBytes: 14 });
    expect(newestThatFit(lines, { maxBytes: 5, maxLines: 10 })).toEqual({ lines: [], droppedLines: 4, droppedBytes: 20 });
    expect(newestThatFit(lines, { maxBytes: 20, maxLines: 4 })).toEqual({ lines, droppedLines: 0, droppedBytes: 0 });
  });

  it("does not keep the chunks it was given: later changes to their bytes change nothing", () => {
    const window = createOutputWindow({ maxBytes: 1024, maxLines: 10 });
    const chunk = Buffer.from("first line\n");
    window.feed("stdout", chunk, 1);
    chunk.fill(0x21);
    expect(window.read().lines).toEqual([{ source: "stdout", text: "first line" }]);
  });
});
