/**
 * A shell read as the model receives it: taken from the job's output text (head, tail and the digest of what lay
 * between), secrets replaced, then folded (shared/fold.ts) unless the caller asked for the raw read. Redaction comes
 * first, so a secret can never survive inside a fold's list of values; folding then sees the text a person would.
 *
 * A read within its budget folds only lines that repeat or count evenly; a read over it folds its head and tail
 * lossily too (its bytes are in the log), keeps its last lines verbatim, and shows the digest in place of the gap.
 */
import type { TakenOutput } from "../../mailbox/output.ts";
import { foldLines, type Folded } from "../../shared/fold.ts";
import { OMISSION, redactReadText } from "../redact/output.ts";
import type { Redactor } from "../redact/redactor.ts";
import type { OutputText } from "./read-text.ts";

/** The newest lines of a read stay verbatim: what a program printed last is what its reader needs whole. */
export const KEEP_LAST_LINES = 10;

/**
 * How a read is wanted: `folded`, `raw` (head and tail as printed around an omission marker), or `both` for a job's
 * last read, taken when it ends, before anyone could say which (the folded text, the raw one beside it if it differs).
 */
export type ReadForm = "folded" | "raw" | "both";

/** Reads of `output`: secrets replaced, then folded as asked. The bytes fed (and the log) are untouched. */
export function modelReads(output: OutputText, redactor: Redactor | null): (final: boolean, form: ReadForm) => TakenOutput {
  let reads = 0;
  return (final, form) => {
    const taken = output.take(final);
    const first = reads === 0;
    reads += 1;
    let { text, middle } = taken;
    let redactions = 0;
    if (redactor !== null && text !== "") {
      const result = redactReadText(redactor, text, { start: !first, end: !final });
      text = result.text;
      redactions += result.count;
    }
    if (redactor !== null && middle !== null) {
      const result = redactor.redactLines(middle);
      middle = result.lines;
      redactions += result.count;
    }
    const read: TakenOutput = { text, bytes: taken.bytes, omittedBytes: taken.omittedBytes, redactions };
    if (form === "raw" || text === "") return read;
    const folded = foldRead(text, middle);
    const result: TakenOutput = { ...read, text: folded.text, foldedLines: folded.foldedLines };
    if (form === "both" && folded.text !== text) result.raw = text;
    return result;
  };
}

/** Lines of `text`, without the empty piece after a final newline (given back by `join`). */
function linesOf(text: string): { lines: string[]; newline: boolean } {
  const lines = text.split("\n");
  const newline = lines.length > 1 && lines[lines.length - 1] === "";
  if (newline) lines.pop();
  return { lines, newline };
}

function join(folded: Folded, newline: boolean): string {
  return folded.lines.join("\n") + (newline ? "\n" : "");
}

/** A read's text folded, with the digest of its omitted middle (when there is one) in place of the marker. */
export function foldRead(text: string, middle: readonly string[] | null): { text: string; foldedLines: number } {
  const marker = new RegExp(OMISSION.source).exec(text);
  if (marker === null) {
    const whole = linesOf(text);
    const folded = foldLines(whole.lines, { mode: "even", keepLast: KEEP_LAST_LINES });
    return { text: join(folded, whole.newline), foldedLines: folded.foldedLines };
  }
  const head = linesOf(text.slice(0, marker.index).replace(/\n$/, ""));
  const tail = linesOf(text.slice(marker.index + marker[0].length).replace(/^\n/, ""));
  const headFolded = foldLines(head.lines[0] === "" && head.lines.length === 1 ? [] : head.lines, { mode: "lossy", keepLast: 0 });
  const tailFolded = foldLines(tail.lines, { mode: "lossy", keepLast: KEEP_LAST_LINES });
  const between = middle ?? [marker[0]];
  const lines = [...headFolded.lines, ...between, ...tailFolded.lines];
  return { text: join({ lines, foldedLines: 0 }, tail.newline), foldedLines: headFolded.foldedLines + tailFolded.foldedLines };
}
