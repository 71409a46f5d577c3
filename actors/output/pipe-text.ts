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

// Every other escape sequence: CSI (cursor moves, erases, modes), two-byte ESC sequences, and the 8-bit CSI.
const OTHER_ESCAPES = /\u001b\[[0-?]*[ -/]*[@-~]|\u009b[0-?]*[ -/]*[@-~]|\u001b[@-Z\\-_]/g;

/**
 * One line as a person reads it, wherever it came from (a pipe or a terminal's raw bytes): `pipeText`, then every
 * remaining escape sequence removed. For lines quoted to the model on their own (a monitor's tail, evidence), where
 * a cursor movement has nothing left to move.
 */
export function plainLine(line: string): string {
  const text = pipeText(line);
  return text.includes("\u001b") || text.includes("\u009b") ? text.replace(OTHER_ESCAPES, "") : text;
}
