import { describe, expect, it } from "vitest";
import { createOutputBacklog, type BacklogPiece } from "../../actors/monitor/output-backlog.ts";

const text = (piece: BacklogPiece | undefined): string =>
  piece === undefined ? "(empty)" : `${piece.source}:${piece.bytes === null ? "EOF" : Buffer.from(piece.bytes).toString()}`;

describe("the output backlog", () => {
  it("gives back chunks and EOFs in arrival order, a chunk in slices of at most the size asked for", () => {
    const backlog = createOutputBacklog();
    expect([backlog.empty, backlog.bytes]).toEqual([true, 0]);
    backlog.push("stdout", Buffer.from("abcdefgh"));
    backlog.push("stderr", Buffer.from("xy"));
    backlog.push("stdout", null);
    expect([backlog.empty, backlog.bytes]).toEqual([false, 10]);
    expect(text(backlog.take(3))).toBe("stdout:abc");
    expect(backlog.bytes).toBe(7);
    expect(text(backlog.take(3))).toBe("stdout:def");
    expect(text(backlog.take(3))).toBe("stdout:gh");
    expect(text(backlog.take(Number.POSITIVE_INFINITY))).toBe("stderr:xy");
    expect(backlog.bytes).toBe(0);
    expect(text(backlog.take(3))).toBe("stdout:EOF");
    expect(backlog.empty).toBe(true);
    expect(text(backlog.take(3))).toBe("(empty)");
  });

  it("hands out the rest of a chunk whole once slices are no longer needed", () => {
    const backlog = createOutputBacklog();
    backlog.push("stdout", Buffer.from("0123456789"));
    expect(text(backlog.take(4))).toBe("stdout:0123");
    expect(text(backlog.take(Number.POSITIVE_INFINITY))).toBe("stdout:456789");
    expect(backlog.empty).toBe(true);
  });

  it("keeps every byte in order through many pieces (its storage is compacted as it goes)", () => {
    const backlog = createOutputBacklog();
    let written = "";
    let read = "";
    for (let round = 0; round < 300; round++) {
      for (let i = 0; i < 3; i++) {
        const chunk = `${round}.${i};`;
        written += chunk;
        backlog.push("stdout", Buffer.from(chunk));
      }
      for (let i = 0; i < 3; i++) read += text(backlog.take(5)).slice("stdout:".length);
    }
    for (let piece = backlog.take(5); piece !== undefined; piece = backlog.take(5)) read += text(piece).slice("stdout:".length);
    expect(read).toBe(written);
    expect([backlog.empty, backlog.bytes]).toEqual([true, 0]);
  });
});
