/**
 * Folding: consecutive output lines that are identical, or identical except for their numbers, become one line that
 * says how many there were and what the numbers were. The model reads the shape of a long output instead of its
 * noise. Pure, and the same on both sides: a shell read folds in its job's actor, a monitor report folds its bounded
 * tail on Pi's thread.
 *
 * The format (stable; the README shows it):
 *
 *   [build] step 1/2000: compiled src/module_1.ts in 12 ms                ← the first line of a run, verbatim
 *   ⟪×1999⟫ [build] step {2..2000}/2000: compiled src/module_{2..2000}.ts in {~3..97} ms
 *
 * - `⟪×N⟫ template` stands for N lines. Each `{…}` in the template gives the n-th line's number: `{a..b}` and
 *   `{a..b..s}` count from a to b by 1 or by s (zero-padded when a and b are, as in bash), `{x,y,z}` lists them. The
 *   braces of one template go together line by line, not as a product. A template without braces is one line
 *   repeated N times.
 * - `⟪~×N⟫` marks a lossy fold: a `{~a..b}` only says that the numbers lay between a and b; the bytes are in the log.
 * - `⟪⟫` in front of a line says that the program itself printed a line beginning with `⟪`.
 * - Other lines are the program's, verbatim.
 *
 * A run of evidence lines (shared/evidence.ts) of one shape keeps more: its first EVIDENCE_HEAD lines and its last one
 * stay verbatim and only the lines between them fold (as the mode allows: an exact fold still decodes to them), so
 * that 10,000 compiler errors read as their first few, one fold that says how many more and what their numbers were,
 * and the last; every kind of error keeps a verbatim line.
 * The lines a caller keeps, the last `keepLast` lines and a run whose text holds a `{` (it could read as a slot) are
 * never folded.
 */
import { isEvidence } from "./evidence.ts";

export const FOLD_MARK = "⟪";
const ESCAPE = "⟪⟫";

/** A fold stands for at least this many lines (a fold of one line is never shorter than the line). */
const MIN_FOLD = 2;
/** Lines of a run of evidence kept verbatim before its fold (its last is kept too); other runs keep their first. */
export const EVIDENCE_HEAD = 3;
/** Lossy folds may list up to this many values; longer lists become a range marked `~`. */
const MAX_LOSSY_LIST = 8;

/**
 * How far a fold may go:
 * - `even`: only lines that repeat or whose numbers count evenly (`{1..50}`); anything else stays verbatim, so a
 *   short read (a CSV, a table of figures) reads as it was printed.
 * - `exact`: also lists of values, as long as the fold is shorter: decodes to exactly the lines it replaces (a
 *   monitor's bounded tail, whose bytes the model has nowhere else).
 * - `lossy`: a list longer than a few values becomes its range, marked `~` (a read that was over its budget anyway,
 *   whose bytes are in the log).
 */
export type FoldMode = "even" | "exact" | "lossy";

export interface FoldRules {
  mode: FoldMode;
  /** The newest lines stay verbatim: what a program printed last is what a reader looks at first. */
  keepLast: number;
  /** Lines that stay verbatim whatever their shape (a monitor's matched line). */
  keep?: (line: string) => boolean;
}

export interface Folded {
  lines: string[];
  /** Input lines that are inside folds (not shown verbatim). */
  foldedLines: number;
}

/** A line split at its digit runs: the text between them (`constants`, one more than `values`) and the runs. */
interface Shape {
  skeleton: string;
  constants: string[];
  values: string[];
}

function shapeOf(line: string): Shape {
  const parts = line.split(/(\d+)/);
  const constants: string[] = [];
  const values: string[] = [];
  parts.forEach((part, i) => (i % 2 === 0 ? constants : values).push(part));
  return { skeleton: constants.join("\u0000"), constants, values };
}

/** A digit run as a number, when it is one exactly. */
function exactNumber(digits: string): number | null {
  return digits.length <= 15 ? Number(digits) : null;
}

const padded = (digits: string): boolean => digits.length > 1 && digits.startsWith("0");

/** `{a..b}` or `{a..b..s}` when the values count evenly from the first to the last, as bash would write them back. */
function rangeOf(values: readonly string[]): string | null {
  if (values.length < 2) return null;
  const first = values[0] as string;
  const anyPadded = values.some(padded);
  if (anyPadded && values.some((value) => value.length !== first.length)) return null;
  const numbers = values.map(exactNumber);
  if (numbers.some((n) => n === null)) return null;
  // Without padding a value must be written as bash would print it back: no leading zero.
  if (!anyPadded && values.some((value, i) => String(numbers[i]) !== value)) return null;
  const step = (numbers[1] as number) - (numbers[0] as number);
  if (step === 0) return null;
  for (let i = 2; i < numbers.length; i += 1) if ((numbers[i] as number) - (numbers[i - 1] as number) !== step) return null;
  const last = values[values.length - 1] as string;
  return Math.abs(step) === 1 ? `{${first}..${last}}` : `{${first}..${last}..${Math.abs(step)}}`;
}

/** Compares digit runs as the numbers they are, whatever their length. */
function compareDigits(a: string, b: string): number {
  const x = a.replace(/^0+(?=\d)/, "");
  const y = b.replace(/^0+(?=\d)/, "");
  return x.length !== y.length ? x.length - y.length : x < y ? -1 : x > y ? 1 : 0;
}

/** How one slot of a fold is written: its value, its range, its list, or (lossy) its bounds. */
function describeSlot(values: readonly string[], mode: FoldMode): { text: string; exact: boolean } | null {
  const first = values[0] as string;
  if (values.every((value) => value === first)) return { text: first, exact: true };
  const range = rangeOf(values);
  if (range !== null) return { text: range, exact: true };
  if (mode === "even") return null;
  if (mode === "exact" || values.length <= MAX_LOSSY_LIST) return { text: `{${values.join(",")}}`, exact: true };
  const sorted = [...values].sort(compareDigits);
  return { text: `{~${sorted[0]}..${sorted[sorted.length - 1]}}`, exact: false };
}

/** The fold line for `lines` (all of one shape), or null when it cannot be written or is no shorter. */
function foldOf(shapes: readonly Shape[], lines: readonly string[], mode: FoldMode): string | null {
  const { constants } = shapes[0] as Shape;
  if (constants.some((text) => text.includes("{"))) return null;
  let exact = true;
  let template = constants[0] as string;
  for (let slot = 0; slot < constants.length - 1; slot += 1) {
    const described = describeSlot(shapes.map((shape) => shape.values[slot] as string), mode);
    if (described === null) return null;
    exact &&= described.exact;
    template += described.text + (constants[slot + 1] as string);
  }
  const fold = `${FOLD_MARK}${exact ? "" : "~"}×${lines.length}⟫ ${template}`;
  const verbatim = lines.reduce((sum, line) => sum + line.length + 1, 0);
  return fold.length + 1 < verbatim ? fold : null;
}

/** The first line of the digest of a read's omitted middle (actors/output/middle-digest.ts). */
export function digestHeading(lines: number, bytes: number): string {
  return `${FOLD_MARK}omitted ${lines} lines (${bytes} bytes) between head and tail: their shapes and every error-like line; the bytes are in log_path⟫`;
}
/** Its last line. */
export const DIGEST_END = `${FOLD_MARK}end of omitted⟫`;

const FOLD_COUNT = /^⟪~?×(\d+)⟫ /;
const DIGEST_COUNT = /^⟪omitted (\d+) lines /;

/**
 * How many lines the program printed for these lines of folded text: a fold counts its N, a digest its omitted lines
 * (not the lines that describe them), any other line one.
 */
export function printedLineCount(lines: readonly string[]): number {
  let count = 0;
  let inDigest = false;
  for (const line of lines) {
    if (inDigest) {
      if (line === DIGEST_END) inDigest = false;
      continue;
    }
    const digest = DIGEST_COUNT.exec(line);
    if (digest !== null) {
      count += Number(digest[1]);
      inDigest = true;
      continue;
    }
    const fold = FOLD_COUNT.exec(line);
    count += fold === null ? 1 : Number(fold[1]);
  }
  return count;
}

/** A program line as it is written among folds. */
export function verbatimLine(line: string): string {
  return line.startsWith(FOLD_MARK) ? ESCAPE + line : line;
}

export function foldLines(lines: readonly string[], rules: FoldRules): Folded {
  const out: string[] = [];
  let foldedLines = 0;
  const foldable = lines.length - Math.max(0, rules.keepLast);
  const kept = (line: string): boolean => rules.keep?.(line) === true;
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] as string;
    if (i >= foldable || kept(line)) {
      out.push(verbatimLine(line));
      i += 1;
      continue;
    }
    // A run: the lines from here of one shape, all evidence or none (so a run of noise never swallows an error).
    const evidence = isEvidence(line);
    const shapes = [shapeOf(line)];
    let end = i + 1;
    while (end < foldable) {
      const next = lines[end] as string;
      if (kept(next)) break;
      const nextShape = shapeOf(next);
      if (nextShape.skeleton !== shapes[0]!.skeleton || isEvidence(next) !== evidence) break;
      shapes.push(nextShape);
      end += 1;
    }
    const run = lines.slice(i, end);
    // Noise keeps its first line; evidence its first few and its last.
    const head = Math.min(run.length, evidence ? EVIDENCE_HEAD : 1);
    const last = evidence && run.length > head ? 1 : 0;
    const middle = run.slice(head, run.length - last);
    const fold = middle.length >= MIN_FOLD ? foldOf(shapes.slice(head, run.length - last), middle, rules.mode) : null;
    out.push(...run.slice(0, head).map(verbatimLine));
    if (fold === null) {
      out.push(...middle.map(verbatimLine));
    } else {
      out.push(fold);
      foldedLines += middle.length;
    }
    out.push(...run.slice(run.length - last).map(verbatimLine));
    i = end;
  }
  return { lines: out, foldedLines };
}
