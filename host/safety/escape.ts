/**
 * The one escaper for model-facing text: monitor reports and shell tool results alike.
 *
 * Command output and the model's own arguments are untrusted data. A raw newline in a value would let output forge a
 * report line (`status=success`), and raw control characters (ESC, C1, DEL) or Unicode line separators are invisible
 * in transcripts and can carry terminal sequences. So they are written out in visible ASCII notation, one notation
 * for both tools (`\x1b`, `\u2028`). Backslashes are deliberately left alone: regexes and paths stay readable, and
 * exact values are always available in the structured result.
 */

const hex2 = (code: number): string => code.toString(16).padStart(2, "0");
const hex4 = (code: number): string => code.toString(16).padStart(4, "0");

// C0 controls, DEL, C1 controls, LINE SEPARATOR and PARAGRAPH SEPARATOR.
const UNSAFE_TEXT = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

// The same, less newline and tab: what multi-line output keeps as it is.
const UNSAFE_IN_OUTPUT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g;

// What JSON.stringify leaves raw: it already escapes C0 controls, but not DEL, C1 or the Unicode separators.
const UNSAFE_IN_JSON = /[\u007f-\u009f\u2028\u2029]/g;

function escapeChar(char: string): string {
  const code = char.charCodeAt(0);
  if (char === "\n") return "\\n";
  if (char === "\r") return "\\r";
  if (char === "\t") return "\\t";
  if (code < 0x20 || code === 0x7f) return `\\x${hex2(code)}`;
  return `\\u${hex4(code)}`;
}

/** A plain value made safe for one `key=value` line: controls and line separators become `\n`, `\x1b`, `\u0085`, `\u2028`. */
export function escapeText(value: string): string {
  return value.replace(UNSAFE_TEXT, escapeChar);
}

/**
 * Compact JSON for model text. The extra escapes are valid JSON string escapes, so `JSON.parse` of the result gives
 * back exactly the serialised value; those characters can only occur inside strings in JSON.stringify's output.
 */
export function escapeJson(value: unknown): string {
  const json = JSON.stringify(value);
  if (json === undefined) return "null";
  return json.replace(UNSAFE_IN_JSON, (char) => `\\u${hex4(char.charCodeAt(0))}`);
}

/** Multi-line output (a shell read): lines and tabs stay, every other control and separator is escaped. */
export function escapeControls(text: string): string {
  // A CRLF line end (every PTY line) is just a line end.
  return text.replace(/\r+\n/g, "\n").replace(UNSAFE_IN_OUTPUT, escapeChar);
}

/** One line of metadata (a command, a path): controls escaped, newlines shown, length bounded. */
export function oneLine(text: string, maxChars: number): string {
  const flat = escapeText(text.replace(/\t/g, " "));
  return flat.length <= maxChars ? flat : `${flat.slice(0, Math.max(0, maxChars - 1))}…`;
}
