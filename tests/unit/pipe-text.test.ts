import { describe, expect, it } from "vitest";
import { pipeText } from "../../actors/output/pipe-text.ts";
import { escapeControls, oneLine } from "../../host/safety/escape.ts";
import { convertsEach } from "../fixtures/converts-each.ts";

describe("pipe text", () => {
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
