/**
 * The label a monitor gets when the model omits `description`: the command itself, reduced to one short line.
 * A leading `sh -c '…'` wrapper says nothing about the work, so the label shows the script it runs instead.
 */

export const MAX_DESCRIPTION_CODE_POINTS = 60;

// `sh -c`, `bash -lc`, `/bin/sh -ec`, `/usr/bin/env bash -c`: a POSIX-like shell given its script with -c.
const SHELL_WRAPPER = /^(?:\/usr\/bin\/env\s+)?(?:\S*\/)?(?:sh|bash|zsh|dash|ksh)\s+-[a-zA-Z]*c[a-zA-Z]*\s+/;

/**
 * Reads the first shell word of `text` as the shell would (single quotes literal, double quotes with `\"`-style
 * escapes, backslash outside quotes), so `'a'\''b'` gives `a'b`. Null when a quote is never closed.
 */
function firstShellWord(text: string): string | null {
  let word = "";
  let i = 0;
  while (i < text.length) {
    const char = text[i] as string;
    if (/\s/.test(char)) break;
    if (char === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) return null;
      word += text.slice(i + 1, end);
      i = end + 1;
    } else if (char === '"') {
      i += 1;
      let closed = false;
      while (i < text.length) {
        const inner = text[i] as string;
        if (inner === '"') {
          closed = true;
          i += 1;
          break;
        }
        const next = text[i + 1];
        if (inner === "\\" && next !== undefined && '"\\$`'.includes(next)) {
          word += next;
          i += 2;
        } else {
          word += inner;
          i += 1;
        }
      }
      if (!closed) return null;
    } else if (char === "\\" && i + 1 < text.length) {
      word += text[i + 1];
      i += 2;
    } else {
      word += char;
      i += 1;
    }
  }
  return word;
}

function unwrapShell(command: string): string {
  const wrapper = SHELL_WRAPPER.exec(command);
  if (!wrapper) return command;
  const rest = command.slice(wrapper[0].length);
  const script = firstShellWord(rest) ?? rest;
  return script.trim() === "" ? command : script;
}

/** Cuts to `max` code points, never inside a surrogate pair; a cut label ends with "…" and still fits `max`. */
export function clipCodePoints(text: string, max: number): string {
  const points = Array.from(text);
  if (points.length <= max) return text;
  return `${points.slice(0, max - 1).join("").trimEnd()}…`;
}

export function deriveDescription(command: string): string {
  const script = unwrapShell(command.trim());
  return clipCodePoints(script.replace(/\s+/g, " ").trim(), MAX_DESCRIPTION_CODE_POINTS);
}
