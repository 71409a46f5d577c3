/**
 * Process output is untrusted data. Before it reaches the model (or a terminal that renders the tool result), every
 * control character except newline and tab is written out as a visible escape, so an escape sequence in output is
 * shown as text instead of acting on anything.
 */

// C0 controls except \t and \n, DEL, and C1 controls.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

function visible(ch: string): string {
  const code = ch.charCodeAt(0);
  if (code === 0x0d) return "\\r";
  if (code === 0x1b) return "\\e";
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

export function escapeControls(text: string): string {
  // A CRLF line end (every PTY line) is just a line end.
  return text.replace(/\r+\n/g, "\n").replace(CONTROL, visible);
}

/** One line of metadata (a command, a path): controls escaped, newlines shown, length bounded. */
export function oneLine(text: string, maxChars: number): string {
  const flat = escapeControls(text).replace(/\n/g, "\\n").replace(/\t/g, " ");
  return flat.length <= maxChars ? flat : `${flat.slice(0, Math.max(0, maxChars - 1))}…`;
}
