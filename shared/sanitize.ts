/**
 * Display sanitizing: command output, command text and model-supplied labels are untrusted, and nothing in them may
 * reach the terminal as control data (invariant 7). Complete escape sequences (CSI, OSC such as OSC 52 clipboard
 * writes, DCS/SOS/PM/APC strings, and their 8-bit C1 introducers) are removed, because a coloured build log shown
 * with its codes spelled out would be unreadable. Every other control character is shown as a visible escape
 * (`\t`, `\r`, `\x07`, `\u0085`), so tabs and carriage returns cannot move the cursor and corrupt the cell layout.
 * Bidirectional overrides are escaped as well: they could make text read differently from what it is. So is a lone
 * UTF-16 surrogate (a model's JSON may carry one): it reaches the terminal as U+FFFD in one cell, while pi-tui
 * counts it as none, so a full-width line holding one would wrap.
 */

export interface Sanitized {
  text: string;
  /** Some character was replaced by a visible escape (the caller may label the value "(escaped controls)"). */
  escaped: boolean;
}

// ESC followed by: CSI (parameters, intermediates, final), OSC (to BEL or ST, or the end), DCS/SOS/PM/APC strings
// (to ST or the end), or a two-byte escape. The 8-bit forms CSI (U+009B), OSC (U+009D) and DCS/SOS/PM/APC
// (U+0090, U+0098, U+009E, U+009F) are introducers too. An unterminated string sequence is cut to the end of the
// text: its payload was never meant to be seen.
const SEQUENCE =
  /(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]?|(?:\u001b\]|\u009d)[^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)?|(?:\u001b[PX^_]|[\u0090\u0098\u009e\u009f])[^\u001b\u009c]*(?:\u001b\\|\u009c)?|\u001b[ -/]*[0-~]/g;

// C0 (newline handled by the caller), DEL, C1, line/paragraph separators, bidi embeddings, overrides and isolates,
// and surrogates that are not half of a pair.
const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

const hex = (code: number, digits: number): string => code.toString(16).padStart(digits, "0");

function visibleEscape(char: string): string {
  const code = char.charCodeAt(0);
  if (char === "\t") return "\\t";
  if (char === "\r") return "\\r";
  if (code < 0x20 || code === 0x7f) return `\\x${hex(code, 2)}`;
  return `\\u${hex(code, 4)}`;
}

function clean(text: string, newline: "escape" | "keep"): Sanitized {
  let escaped = false;
  const stripped = text.replace(SEQUENCE, "");
  let out = stripped.replace(UNSAFE, (char) => {
    escaped = true;
    return visibleEscape(char);
  });
  if (newline === "escape" && out.includes("\n")) {
    escaped = true;
    out = out.replaceAll("\n", "\\n");
  }
  return { text: out, escaped };
}

/** One display line: newlines become `\n` too. */
export function sanitizeInline(text: string): Sanitized {
  return clean(text, "escape");
}

/** Multi-line text (a command, a payload): split into display lines, each free of control characters. */
export function sanitizeBlock(text: string): { lines: string[]; escaped: boolean } {
  const result = clean(text, "keep");
  return { lines: result.text.split("\n"), escaped: result.escaped };
}

/** Shorthand for `sanitizeInline(text).text`. */
export function safe(text: string): string {
  return sanitizeInline(text).text;
}
