/**
 * The output after the last newline, decoded only where it can matter: checked against the plain reading of the rule
 * (decode everything, keep what follows the last newline, bounded) on random output with multi-byte characters split
 * across chunks, invalid bytes, both sources and long runs without a newline.
 */
import { describe, expect, it } from "vitest";
import type { SourceName } from "../../mailbox/constants.ts";
import { UnterminatedLine } from "../../actors/output/unterminated-line.ts";

/** The rule as first written: every byte decoded. */
class Reference {
  private readonly decoders = new Map<SourceName, InstanceType<typeof TextDecoder>>();
  private readonly maxChars: number;
  text = "";
  constructor(maxChars: number) {
    this.maxChars = maxChars;
  }
  feed(source: SourceName, chunk: Uint8Array): void {
    let decoder = this.decoders.get(source);
    if (decoder === undefined) this.decoders.set(source, (decoder = new TextDecoder("utf-8")));
    const text = decoder.decode(chunk, { stream: true });
    const newline = text.lastIndexOf("\n");
    this.text = newline >= 0 ? text.slice(newline + 1) : this.text + text;
    if (this.text.length > this.maxChars) this.text = this.text.slice(-this.maxChars);
  }
}

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const PIECES = ["a", "é", "€", "😀", "\n", "Password: ", "\r", "\x1b[1m", "x".repeat(50)].map((text) => Buffer.from(text));
const INVALID = [Buffer.from([0xff]), Buffer.from([0xe2, 0x82]), Buffer.from([0x80, 0x80])];

describe("UnterminatedLine", () => {
  it("keeps what follows the last newline, bounded, exactly as decoding everything would", () => {
    for (let seed = 1; seed <= 300; seed += 1) {
      const next = random(seed);
      const maxChars = [8, 40, 800][seed % 3]!;
      const fast = new UnterminatedLine(maxChars);
      const reference = new Reference(maxChars);
      for (let chunkIndex = 0; chunkIndex < 30; chunkIndex += 1) {
        const parts: Buffer[] = [];
        const long = next() < 0.1;
        const count = long ? 2000 : Math.floor(next() * 20);
        for (let i = 0; i < count; i += 1) {
          const roll = next();
          if (long && roll < 0.99) parts.push(PIECES[Math.floor(next() * 4)]!);
          else parts.push(roll < 0.05 ? INVALID[Math.floor(next() * INVALID.length)]! : PIECES[Math.floor(next() * PIECES.length)]!);
        }
        const bytes = Buffer.concat(parts);
        // Cut anywhere, also inside a character, and feed the pieces from one source or the other.
        const cut = Math.floor(next() * (bytes.length + 1));
        const source: SourceName = next() < 0.8 ? "stdout" : "stderr";
        for (const piece of [bytes.subarray(0, cut), bytes.subarray(cut)]) {
          fast.feed(source, piece);
          reference.feed(source, piece);
          expect(fast.text, `seed ${seed}, chunk ${chunkIndex}`).toBe(reference.text);
        }
      }
    }
  });

  it("is the unterminated line after output that ends with one", () => {
    const tail = new UnterminatedLine(800);
    tail.feed("stdout", Buffer.from("building…\nPassword: "));
    expect(tail.text).toBe("Password: ");
    tail.feed("stdout", Buffer.from("\n"));
    expect(tail.text).toBe("");
  });
});
