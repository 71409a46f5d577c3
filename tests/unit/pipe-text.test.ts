import { describe, expect, it } from "vitest";
import { pipeText, pipeTextBytes } from "../../actors/output/pipe-text.ts";
import { escapeControls, oneLine } from "../../host/safety/escape.ts";
import { convertsEach } from "../fixtures/converts-each.ts";

const utf8 = new TextEncoder();
const decoder = new TextDecoder();
/** pipeTextBytes over the whole of `text`, decoded, its CRLF line ends made LF (as a reader of each line does). */
function onBytes(text: string): string | null {
  const bytes = utf8.encode(text);
  const out = pipeTextBytes(bytes, 0, bytes.length);
  return out === null ? null : decoder.decode(out).replace(/\r(?=\n|$)/g, "");
}

describe("pipe text", () => {
  it("renders on bytes what it can: plain text as it is, colour codes removed; OSC, C1 and `\\r` overwrites only as text", () => {
    const plain = utf8.encode("plain 1\nline 2 ✓\n");
    expect(pipeTextBytes(plain, 0, plain.length)?.buffer).toBe(plain.buffer);
    for (const text of ["plain 1\nline 2\n", "crlf\r\nline\r\n", "ends with\r", "é ° ± ✓ ❯\n", "\u001b[1;32m✓\u001b[0m ok \u001b[2K kept\n", "\u001b[12 no\u001b", "\u001b[0;38:5:1m\u001b[m"]) {
      expect(onBytes(text), JSON.stringify(text)).toBe(pipeText(text));
    }
    for (const text of ["\u001b]0;title\u0007x\n", "\u009b31mred\n", "\u009d0;t\u0007x\n", "50%\r100%\n"]) expect(onBytes(text), JSON.stringify(text)).toBe(null);
  });

  it("renders on bytes as on text (property, 300 seeds)", () => {
    const pieces = ["a", "7", " ", "\n", "\r\n", "✓", "é", "\u001b[31m", "\u001b[0m", "\u001b[1;2:3m", "\u001b[2K", "\u001b[", "\u001b", "m", ";"];
    const textOnly = ["\u001b]8;;x\u0007", "\r", "\u009b1m"];
    let onlyText = 0;
    for (let seed = 1; seed <= 300; seed += 1) {
      let state = seed;
      const next = (): number => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32;
      const piece = (): string => (next() < 0.01 ? textOnly[Math.floor(next() * textOnly.length)] : pieces[Math.floor(next() * pieces.length)]) as string;
      const text = Array.from({ length: 40 }, piece).join("");
      const rendered = onBytes(text);
      if (rendered === null) onlyText += 1;
      else expect(rendered, `seed ${seed}`).toBe(pipeText(text));
    }
    expect(onlyText).toBeGreaterThan(0);
    expect(onlyText).toBeLessThan(200);
  });

  it("removes colour codes and OSC strings, also 8-bit and unterminated ones", convertsEach(pipeText, [
    ["\u001b[1;32m✓\u001b[0m ok \u001b]0;title\u0007x \u001b]8;;https://e.x\u001b\\link\u001b]8;;\u001b\\", "✓ ok x link"],
    ["\u009b31mred\u009b0m \u009d2;t\u009cy", "red y"],
    ["a\u001b]52;c;c2VjcmV0", "a"],
  ]));

  it("applies carriage returns within each line: later text overwrites earlier text", convertsEach(pipeText, [
    ["10%\r20%\r100%\ndone\n", "100%\ndone\n"],
    ["downloading...\rok\n", "okwnloading...\n"],
    ["line\r\nnext\r\n", "line\nnext\n"],
    ["50%\r", "50%"],
  ]));

  it("leaves every other control for the visible escaping", () => {
    const text = pipeText("a\u001b[2Kb\u0007c\bd");
    expect(text).toBe("a\u001b[2Kb\u0007c\bd");
    expect(escapeControls(text)).toBe("a\\x1b[2Kb\\x07c\\x08d");
  });

  it("escapes Unicode line separators in shell output and metadata, as a monitor report does", () => {
    // Invisible in a transcript, and a line break to whatever reads the text as lines.
    expect(escapeControls("one\u2028two\u2029three\n\tfour\r\n")).toBe("one\\u2028two\\u2029three\n\tfour\n");
    expect(oneLine("echo a\u2028b\nc\u001b[0m\td", 80)).toBe("echo a\\u2028b\\nc\\x1b[0m d");
    expect(oneLine("x".repeat(20), 10)).toBe(`${"x".repeat(9)}…`);
  });
});
