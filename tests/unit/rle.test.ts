import { describe, expect, it } from "vitest";
import { compactPayloadLines, encodeRle, RLE_ENCODING_LINE, RLE_PAYLOAD_KEY } from "../../host/monitor/rle.ts";
import { decodeRle, parseRle } from "../fixtures/unrle.ts";

/** A small deterministic generator, so a failing case can be replayed from its seed. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const ALPHABET = ["a", "b", '"', "\\", "\n", "\t", "\u001b", "\u007f", "\u0085", "\u2028", "\u2029", "é", "中", "😀", "\ud800", "{", "}", " "];

function randomText(next: () => number): string {
  const parts: string[] = [];
  const pieces = Math.floor(next() * 12);
  for (let p = 0; p < pieces; p += 1) {
    const unitLength = 1 + Math.floor(next() * 6);
    let unit = "";
    for (let k = 0; k < unitLength; k += 1) unit += ALPHABET[Math.floor(next() * ALPHABET.length)];
    // Half the pieces repeat their unit, some of them many times.
    parts.push(next() < 0.5 ? unit : unit.repeat(1 + Math.floor(next() * 400)));
  }
  return parts.join("");
}

describe("rle-v1", () => {
  it("round-trips 500 seeded strings with quotes, escapes, controls, separators, astral and lone surrogates", () => {
    let withRepeats = 0;
    for (let seed = 1; seed <= 500; seed += 1) {
      const text = randomText(generator(seed));
      const parts = encodeRle(text);
      if (parts.some((part) => typeof part !== "string")) withRepeats += 1;
      expect(decodeRle(parts), `seed ${seed}`).toBe(text);
      expect(decodeRle(parseRle(JSON.stringify(parts))), `seed ${seed}`).toBe(text);
    }
    // The corpus must actually exercise repeats, not only literals.
    expect(withRepeats).toBeGreaterThan(200);
  });

  it("encodes a long run as one repeat", () => {
    expect(encodeRle(`x${"a".repeat(1000)}y`)).toEqual(["x", ["a", 1000], "y"]);
  });

  it("finds repeated multi-character units such as JSON records", () => {
    const record = '{"id":1,"ok":true},';
    const parts = encodeRle(`[${record.repeat(200)}]`);
    const repeat = parts.find((part) => typeof part !== "string");
    expect(repeat).toBeDefined();
    expect((repeat as [string, number])[1]).toBeGreaterThanOrEqual(199);
    expect(decodeRle(parts)).toBe(`[${record.repeat(200)}]`);
  });

  it("never splits a surrogate pair into a repeated unit", () => {
    const parts = encodeRle("😀".repeat(100));
    expect(parts).toEqual([["😀", 100]]);
  });

  it("leaves short repeats and plain text literal", () => {
    expect(encodeRle("aaaa bbbb hello")).toEqual(["aaaa bbbb hello"]);
    expect(encodeRle("")).toEqual([]);
  });

  it("rejects malformed payloads", () => {
    expect(() => parseRle('{"a":1}')).toThrow(/array/);
    expect(() => parseRle('["a",["b"]]')).toThrow(/part 1/);
    expect(() => parseRle('[["b",0]]')).toThrow(/part 0/);
    expect(() => parseRle('[["b",1.5]]')).toThrow(/part 0/);
    expect(() => parseRle("[1]")).toThrow(/part 0/);
  });
});

describe("compactPayloadLines", () => {
  it("returns the encoding note and an escaped payload line when materially smaller", () => {
    const payload = `result={"value":"${"\u2028".repeat(50)}${"a".repeat(5000)}"}`;
    const lines = compactPayloadLines(payload);
    expect(lines).not.toBeNull();
    const [note, encoded] = lines as [string, string];
    expect(note).toBe(RLE_ENCODING_LINE);
    expect(encoded.startsWith(RLE_PAYLOAD_KEY)).toBe(true);
    // Unicode separators are escaped in the line and restored by parsing.
    expect(encoded).not.toMatch(/[\u2028\u2029]/);
    expect(decodeRle(parseRle(encoded.slice(RLE_PAYLOAD_KEY.length)))).toBe(payload);
    expect(note.length + encoded.length).toBeLessThan(payload.length / 10);
  });

  it("returns null when the saving is small or absent", () => {
    expect(compactPayloadLines(`result="${"a".repeat(100)}"`)).toBeNull();
    expect(compactPayloadLines("capture.x=the quick brown fox jumps over the lazy dog".repeat(1))).toBeNull();
    const next = generator(42);
    const noise = Array.from({ length: 5000 }, () => String.fromCharCode(33 + Math.floor(next() * 90))).join("");
    expect(compactPayloadLines(noise)).toBeNull();
  });

  it("encodes 32 KiB of repeated records without quadratic cost", () => {
    const started = performance.now();
    const lines = compactPayloadLines(`result=${JSON.stringify({ rows: Array.from({ length: 2000 }, () => ({ a: 1, b: "x" })) })}`);
    expect(lines).not.toBeNull();
    // Generous: the point is that the encoder is not quadratic, not a wall-clock promise.
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
