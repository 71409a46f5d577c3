import { describe, expect, it } from "vitest";
import { renderedOmissionMarker, TerminalText } from "../../actors/output/terminal-text.ts";

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const terminal = (cols = 80, rows = 10, headBytes = 8192, tailBytes = 8192) => new TerminalText({ cols, rows, headBytes, tailBytes });

describe("terminal text", () => {
  it("gives a REPL exchange as a person reads it: echo, result and prompt, no colour or cursor codes", () => {
    const t = terminal();
    t.feed(bytes("Welcome to Node.js v22.23.3.\r\n\u001b[1G\u001b[0J> \u001b[3G"));
    expect(t.take().text).toBe("Welcome to Node.js v22.23.3.\n> ");
    t.feed(bytes("[7,14,21]\r\n[ \u001b[33m7\u001b[39m, \u001b[33m14\u001b[39m, \u001b[33m21\u001b[39m ]\r\n\u001b[1G\u001b[0J> \u001b[3G"));
    // The banner was returned already and did not change; the prompt line did (it now holds the echo).
    expect(t.take().text).toBe("> [7,14,21]\n[ 7, 14, 21 ]\n> ");
    expect(t.take().text).toBe("");
  });

  it("collapses a carriage-return progress bar to its last state", () => {
    const t = terminal();
    let bar = "";
    for (let i = 1; i <= 100; i += 1) bar += `\r\u001b[36m[${"#".repeat(Math.floor(i / 5)).padEnd(20)}]\u001b[0m ${i}%`;
    t.feed(bytes(`${bar}\r\nadded 100 packages\r\n`));
    expect(t.take().text).toBe("[####################] 100%\nadded 100 packages");
  });

  it("keeps lines that scrolled off between reads, bounded as head and tail with the omission counted", () => {
    const t = terminal(80, 10, 100, 100);
    for (let i = 0; i < 1000; i += 1) t.feed(bytes(`line ${i}\r\n`));
    const read = t.take();
    const lines = read.text.split("\n");
    expect(lines[0]).toBe("line 0");
    expect(lines.at(-1)).toBe("line 999");
    expect(read.omittedBytes).toBeGreaterThan(0);
    expect(read.text).toContain(renderedOmissionMarker(read.omittedBytes));
    // Head and tail each stay within their bound (plus the marker).
    expect(Buffer.byteLength(read.text)).toBeLessThan(100 + 100 + 120);
  });

  it("loses no line that scrolls off inside one large write", () => {
    const t = terminal(20, 5, 1 << 20, 1 << 20);
    let text = "";
    for (let i = 0; i < 3000; i += 1) text += `${i}\n\r`;
    t.feed(bytes(text));
    expect(t.take().text.split("\n")).toEqual(Array.from({ length: 3000 }, (_, i) => String(i)));
  });

  it("joins soft-wrapped rows into the line they are", () => {
    const t = terminal(20, 5);
    t.feed(bytes(`${"x".repeat(50)}\r\nend\r\n`));
    expect(t.take().text).toBe(`${"x".repeat(50)}\nend`);
  });

  it("gives a full-screen program's current screen, and the shell's lines after it exits", () => {
    const t = terminal(40, 5);
    t.feed(bytes("$ top\r\n\u001b[?1049h\u001b[H\u001b[2Jtop - 10:00:01\r\nTasks: 3\r\n"));
    expect(t.take().text).toBe("top - 10:00:01\nTasks: 3");
    t.feed(bytes("\u001b[H\u001b[2Jtop - 10:00:02\r\nTasks: 4\r\n"));
    expect(t.take().text).toBe("top - 10:00:02\nTasks: 4");
    t.feed(bytes("\u001b[?1049l$ "));
    // The shell's screen was hidden while the program ran, so its lines are new to the reader now.
    expect(t.take().text).toBe("$ top\n$ ");
    t.feed(bytes("ls\r\n"));
    expect(t.take().text).toBe("$ ls");
  });

  it("keeps a character split across writes", () => {
    const t = terminal();
    const euro = bytes("€");
    t.feed(euro.subarray(0, 2));
    t.feed(euro.subarray(2));
    expect(t.take().text).toBe("€");
  });

  it("counts raw bytes since the previous read", () => {
    const t = terminal();
    t.feed(bytes("\u001b[31mred\u001b[0m"));
    expect(t.unreadBytes).toBe(12);
    t.take();
    expect(t.unreadBytes).toBe(0);
  });
});
