import { describe, expect, it } from "vitest";
import { decodeCEscapes } from "../../host/shell/escapes.ts";

function bytes(text: string): number[] {
  const r = decodeCEscapes(text);
  if (!r.ok) throw new Error(r.error);
  return [...r.bytes];
}

describe("decodeCEscapes", () => {
  it("decodes the simple C escapes", () => {
    expect(bytes("a\\r\\n\\t\\\\\\\"\\'\\a\\b\\f\\v\\e\\?")).toEqual([97, 13, 10, 9, 92, 34, 39, 7, 8, 12, 11, 27, 63]);
  });
  it("turns \\x03 and \\u0003 into Ctrl-C", () => {
    expect(bytes("\\x03")).toEqual([3]);
    expect(bytes("\\u0003")).toEqual([3]);
  });
  it("keeps \\xHH as one raw byte, not a code point", () => {
    expect(bytes("\\xff\\x80")).toEqual([0xff, 0x80]);
  });
  it("encodes \\u, \\u{…} and \\U escapes as UTF-8", () => {
    expect(bytes("\\u00e9")).toEqual([0xc3, 0xa9]);
    expect(bytes("\\u{1F600}")).toEqual([0xf0, 0x9f, 0x98, 0x80]);
    expect(bytes("\\U0001F600")).toEqual([0xf0, 0x9f, 0x98, 0x80]);
  });
  it("decodes octal escapes up to three digits", () => {
    expect(bytes("\\0")).toEqual([0]);
    expect(bytes("\\033[A")).toEqual([27, 91, 65]);
    expect(bytes("\\1234")).toEqual([0o123, 52]);
  });
  it("passes already-decoded control characters and non-ASCII text through", () => {
    expect(bytes("\u0003é")).toEqual([3, 0xc3, 0xa9]);
  });
  it("keeps a backslash that starts no escape, and a trailing one", () => {
    expect(bytes("C:\\dir\\d")).toEqual([...Buffer.from("C:\\dir\\d")]);
    expect(bytes("end\\")).toEqual([...Buffer.from("end\\")]);
  });
  it("rejects malformed hex and unicode escapes with the offset", () => {
    const x = decodeCEscapes("ab\\xzz");
    expect(x.ok).toBe(false);
    if (!x.ok) expect(x.error).toMatch(/chars.*\\x.*offset 2/);
    expect(decodeCEscapes("\\u12").ok).toBe(false);
    expect(decodeCEscapes("\\u{110000}").ok).toBe(false);
    expect(decodeCEscapes("\\ud800").ok).toBe(false);
    expect(decodeCEscapes("\\400").ok).toBe(false);
  });
});
