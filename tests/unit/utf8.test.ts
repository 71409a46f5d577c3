import { describe, expect, it } from "vitest";
import { incompleteSuffix, leadingContinuations } from "../../shared/utf8.ts";

const enc = (text: string): Uint8Array => new TextEncoder().encode(text);

describe("UTF-8 boundaries", () => {
  it("counts the bytes of a character cut at the end, for every cut of 2-, 3- and 4-byte characters", () => {
    for (const char of ["é", "€", "😀"]) {
      const bytes = enc(`a${char}`);
      for (let end = 1; end < bytes.length; end++) expect(incompleteSuffix(bytes, end), `${char} cut at ${end}`).toBe(end - 1);
      expect(incompleteSuffix(bytes)).toBe(0);
    }
  });

  it("counts continuation bytes cut off in front", () => {
    const bytes = enc("😀a");
    for (let from = 1; from < 4; from++) expect(leadingContinuations(bytes.subarray(from))).toBe(4 - from);
    expect(leadingContinuations(bytes)).toBe(0);
    expect(leadingContinuations(new Uint8Array(0))).toBe(0);
  });

  it("leaves invalid bytes to the decoder: a byte that never starts a character is not held back", () => {
    for (const byte of [0x80, 0xc0, 0xc1, 0xf5, 0xf8, 0xff]) expect(incompleteSuffix(Uint8Array.of(0x61, byte)), byte.toString(16)).toBe(0);
    // Four continuation bytes are no character's tail.
    expect(incompleteSuffix(Uint8Array.of(0x80, 0x80, 0x80, 0x80))).toBe(0);
    expect(incompleteSuffix(new Uint8Array(0))).toBe(0);
  });
});
