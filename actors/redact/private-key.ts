/**
 * PEM private key blocks for the redactor (actors/redact/redactor.ts): found with `indexOf` and a line scan rather
 * than a pattern, because a block spans lines, may be cut at either end and may be printed on one line with `\n`
 * escapes. Apart from the redactor because it is a scanner of its own, with its own linearity argument.
 */
import type { Span } from "./spans.ts";

export const PRIVATE_KEY = "PRIVATE KEY";
const PRIVATE_KEY_NAME = "private_key";
const BEGIN = "-----BEGIN ";
const END = "-----END ";

/**
 * `-----BEGIN … PRIVATE KEY-----` through its `-----END … PRIVATE KEY-----`. A block whose END is missing (the output
 * was cut) runs over every following line that can belong to a key; one whose BEGIN is missing (a tail that evicted
 * it) runs back over the key lines before its END. A block on one line (a key printed with `\n` escapes, in JSON for
 * instance) ends at its END marker. Every search below moves forward only (or back over lines it then covers), so
 * the scan stays linear however many markers the text holds.
 */
export function privateKeySpans(text: string, spans: Span[]): void {
  let covered = 0;
  let lineEnd = -1;
  /** The first END marker at or after the latest BEGIN; -1 once there is none left; null before the first search. */
  let endMarker: number | null = null;
  for (let at = text.indexOf(PRIVATE_KEY); at >= 0; at = text.indexOf(PRIVATE_KEY, Math.max(at + 1, covered))) {
    if (lineEnd < at) lineEnd = endOfLine(text, at);
    const begin = labelStart(text, at, BEGIN);
    if (begin >= 0) {
      if (endMarker === null || (endMarker >= 0 && endMarker < at)) endMarker = text.indexOf(END, at);
      const oneLine = endMarker >= 0 && endMarker < lineEnd ? closingLabel(text, endMarker, lineEnd) : -1;
      const end = oneLine >= 0 ? oneLine : blockEnd(text, lineEnd);
      spans.push({ start: begin, end, name: PRIVATE_KEY_NAME });
      covered = end;
      continue;
    }
    const closing = labelStart(text, at, END);
    if (closing < 0) continue;
    // Its BEGIN is not in this text: take the key lines just before it, back to what is already covered.
    let start = closing;
    if (closing === 0 || text.charCodeAt(closing - 1) === NEWLINE) {
      for (let prevEnd = closing - 1; prevEnd > covered; ) {
        const prevStart = text.lastIndexOf("\n", prevEnd - 1) + 1;
        if (prevStart < covered || prevStart === prevEnd || !keyLine(text, prevStart, prevEnd)) break;
        start = prevStart;
        prevEnd = prevStart - 1;
      }
    }
    const end = headerEnd(text, at + PRIVATE_KEY.length, lineEnd);
    spans.push({ start, end, name: PRIVATE_KEY_NAME });
    covered = end;
  }
}

const NEWLINE = 0x0a;
/** Longest label between `-----BEGIN ` and `PRIVATE KEY` (`ENCRYPTED`, `OPENSSH`, `PGP`, …), with room to spare. */
const MAX_LABEL = 40;

function endOfLine(text: string, from: number): number {
  const newline = text.indexOf("\n", from);
  return newline < 0 ? text.length : newline;
}

/** Where `prefix` followed by an upper-case label ends right at `at` (the `PRIVATE KEY` found), or -1. */
function labelStart(text: string, at: number, prefix: string): number {
  const from = Math.max(0, at - prefix.length - MAX_LABEL);
  const start = text.slice(from, at).lastIndexOf(prefix);
  if (start < 0) return -1;
  for (let i = from + start + prefix.length; i < at; i++) {
    const code = text.charCodeAt(i);
    if (!((code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code === 32)) return -1;
  }
  return from + start;
}

/** The end of `-----END … PRIVATE KEY-----` starting at `endMarker` on the same line, or -1 when it is another label. */
function closingLabel(text: string, endMarker: number, lineEnd: number): number {
  const window = text.slice(endMarker, Math.min(lineEnd, endMarker + END.length + MAX_LABEL + PRIVATE_KEY.length));
  const label = window.indexOf(PRIVATE_KEY);
  if (label < 0 || labelStart(text, endMarker + label, END) !== endMarker) return -1;
  return headerEnd(text, endMarker + label + PRIVATE_KEY.length, lineEnd);
}

/** The end of a block whose BEGIN line ends at `lineEnd`: its END line, or the last line that can belong to it. */
function blockEnd(text: string, lineEnd: number): number {
  let end = lineEnd;
  while (end < text.length) {
    const next = end + 1;
    const nextEnd = endOfLine(text, next);
    const window = text.slice(next, Math.min(nextEnd, next + END.length + MAX_LABEL + PRIVATE_KEY.length));
    if (window.startsWith(END)) {
      const close = closingLabel(text, next, nextEnd);
      return close >= 0 ? close : end;
    }
    if (!keyLine(text, next, nextEnd)) return end;
    end = nextEnd;
  }
  return end;
}

/** The end of ` BLOCK-----` / `-----` after a label, within the line. */
function headerEnd(text: string, from: number, lineEnd: number): number {
  const dashes = text.slice(from, Math.min(lineEnd, from + 11)).indexOf("-----");
  return dashes >= 0 ? from + dashes + 5 : lineEnd;
}

/** A line that can belong to a PEM body: base64, one of the two headers of a legacy encrypted key, or empty. */
function keyLine(text: string, start: number, end: number): boolean {
  if (text.startsWith("Proc-Type:", start) || text.startsWith("DEK-Info:", start)) return true;
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i);
    const base64 =
      (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || code === 43 || code === 47 || code === 61;
    // CR: output with CRLF line ends.
    if (!base64 && code !== 13) return false;
  }
  return true;
}
