/**
 * Pipe output as a reader would take it: colour codes (SGR) and OSC strings (titles, hyperlinks, clipboard writes)
 * are removed, and within each line a carriage return goes back to its start so that later text overwrites earlier
 * text, as a terminal shows it (a `\r` progress bar keeps its last state). Every other control character stays, to be
 * escaped visibly where the text meets the model: cursor movement in a pipe is unusual enough to be worth seeing.
 *
 * Pure (no Pi, no I/O), so it can run inside the job actor.
 */

// SGR: CSI (7-bit or the 8-bit U+009B) with numeric parameters, ending in `m`.
// OSC: ESC ] or U+009D, up to BEL, ST (ESC \ or U+009C), or the end of the text (an unterminated string's payload
// was never meant to be seen).
const COLOUR_AND_OSC = /(?:\u001b\[|\u009b)[0-9;:]*m|(?:\u001b\]|\u009d)[^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)?/g;

/** One line (no `\n`) with its carriage returns applied: each `\r` moves back to column 0 and later text overwrites. */
function overwrite(line: string): string {
  if (!line.includes("\r")) return line;
  const segments = line.split("\r");
  // A CRLF line end, or a bar whose last update ends with `\r`, leaves the line as it stands.
  while (segments.length > 1 && segments[segments.length - 1] === "") segments.pop();
  let cells = [...segments[0]!];
  for (let i = 1; i < segments.length; i += 1) {
    const over = [...segments[i]!];
    cells = over.length >= cells.length ? over : [...over, ...cells.slice(over.length)];
  }
  return cells.join("");
}

export function pipeText(text: string): string {
  const plain = text.replace(COLOUR_AND_OSC, "");
  if (!plain.includes("\r")) return plain;
  return plain.split("\n").map(overwrite).join("\n");
}

/** What `plainLine` changes: ESC, the 8-bit CSI and OSC, a carriage return. */
const NEEDS_RENDERING = /[\u001b\u009b\u009d\r]/;

// Every other escape sequence: CSI (cursor moves, erases, modes), two-byte ESC sequences, and the 8-bit CSI.
const OTHER_ESCAPES = /\u001b\[[0-?]*[ -/]*[@-~]|\u009b[0-?]*[ -/]*[@-~]|\u001b[@-Z\\-_]/g;

/**
 * One line as a person reads it, wherever it came from (a pipe or a terminal's raw bytes): `pipeText`, then every
 * remaining escape sequence removed. For lines quoted to the model on their own (a monitor's tail, evidence), where
 * a cursor movement has nothing left to move.
 */
export function plainLine(line: string): string {
  // Most lines hold none of it: one scan, no copy (a monitor renders every line its tail keeps, per chunk).
  if (!NEEDS_RENDERING.test(line)) return line;
  const text = pipeText(line);
  return text.includes("\u001b") || text.includes("\u009b") ? text.replace(OTHER_ESCAPES, "") : text;
}

const ESC = 0x1b;
const CR = 0x0d;
const LF = 0x0a;
/** The first byte of U+0080–U+00BF in UTF-8; U+009B (CSI) and U+009D (OSC) continue it with 0x9B and 0x9D. */
const C1_LEAD = 0xc2;
/** `[` after ESC begins a CSI (a colour code is one ending in `m`), `]` an OSC string. */
const CSI = 0x5b;
const OSC = 0x5d;
const SGR_END = 0x6d;
const isSgrParameter = (byte: number): boolean => (byte >= 0x30 && byte <= 0x39) || byte === 0x3b || byte === 0x3a;

/**
 * `pipeText` over UTF-8 bytes, where it can be done there: the bytes themselves when they hold nothing it would
 * change (found by native scans, so plain output costs next to nothing), a copy without their colour codes when those
 * are all it would change, and null when only the text can say (an OSC string, a C1 control, a carriage return other
 * than a CRLF line end). A CRLF line end is left to the reader of each line. Lets the digest of omitted output
 * (actors/output/middle-digest.ts) read a flood as its bytes, without decoding it.
 */
export function pipeTextBytes(bytes: Uint8Array, from: number, to: number): Uint8Array | null {
  const view = bytes.subarray(from, to);
  const escapes = view.includes(ESC);
  const controls = view.includes(C1_LEAD);
  if (!escapes && !controls) return !view.includes(CR) || crlfOnly(view) ? view : null;
  const out = new Uint8Array(view.length);
  let length = 0;
  for (let i = 0; i < view.length; i += 1) {
    const byte = view[i] as number;
    const next = view[i + 1];
    if (byte === ESC && next === CSI) {
      // The same colour code as COLOUR_AND_OSC's: ESC [, parameters, m.
      let end = i + 2;
      while (end < view.length && isSgrParameter(view[end] as number)) end += 1;
      if (view[end] === SGR_END) {
        i = end;
        continue;
      }
    } else if (byte === ESC && next === OSC) {
      return null;
    } else if (byte === CR && next !== LF && next !== undefined) {
      return null;
    } else if (byte === C1_LEAD && (next === 0x9b || next === 0x9d)) {
      return null;
    }
    out[length] = byte;
    length += 1;
  }
  return out.subarray(0, length);
}

/** Every carriage return in `bytes` ends a line (a CRLF line end, or the last byte). */
function crlfOnly(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length - 1; i += 1) if (bytes[i] === CR && bytes[i + 1] !== LF) return false;
  return true;
}

/** Pipe text as the digest of omitted output takes it (its `TextRender`). */
export const PIPE_TEXT = { text: pipeText, bytes: pipeTextBytes };
