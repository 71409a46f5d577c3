/**
 * The shape of an output line for the digest (actors/output/middle-digest.ts): its text with every digit run as one
 * mark, hashed into a number, and the values of its first digit runs; then, over the many lines of one shape, what
 * each of those numbers did (constant, counting evenly, or only a range), written as a fold template. Pure.
 *
 * Reading a shape is the digest's hot path, once per omitted line: it allocates nothing (the last shape read is one
 * reused record) and reads each byte once.
 */
import { FOLD_MARK, verbatimLine } from "../../shared/fold.ts";

/** Digit runs per shape whose numbers are tracked; later ones are written `{~}`. */
export const MAX_SLOTS = 12;

/** The last shape read. */
export const shape = {
  /** Two 26-bit hashes of the text without its digits, and the count of digit runs: two different shapes among a
   *  digest's few dozen share a key with negligible odds. */
  key: 0,
  /** Digit runs in the line (also those past MAX_SLOTS). */
  slots: 0,
  values: new Float64Array(MAX_SLOTS),
  digits: new Uint8Array(MAX_SLOTS),
  padded: new Uint8Array(MAX_SLOTS),
};
/** The slots' arrays, held here so that the hot loops (readDigitRun) do not look them up on `shape` per digit run. */
const { values: slotValues, digits: slotDigits, padded: slotPadded } = shape;

/**
 * Reads the shape of the line in UTF-8 `bytes` from `start` to the next newline or `end`, whichever comes first, into
 * `shape`; returns where it stopped. Bytes, not text: the digest reads every omitted line, and a line whose shape it
 * has seen before costs this loop and no decoding.
 */
export function readShapeBytes(bytes: Uint8Array, start: number, end: number): number {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  let slots = 0;
  let i = start;
  while (i < end) {
    const c = bytes[i] as number;
    if (c === 10) break;
    if (c >= 48 && c <= 57) {
      i = readDigitRun(bytes, i, end, slots);
      slots += 1;
      // A digit run counts in the key as one mark, whatever its digits.
      h1 = Math.imul(h1 ^ 0x30, 0x01000193);
      h2 = Math.imul(h2 ^ 0x30, 0x5bd1e995);
      continue;
    }
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
    i += 1;
  }
  shape.slots = slots;
  shape.key = (h1 >>> 6) * 0x4000000 + (h2 >>> 6) + Math.min(slots, 1023) / 1024;
  return i;
}

/**
 * Reads the digit run that begins at `i` (a digit) and ends before `end` or the first byte that is no digit; returns
 * where it ended. Slot `slot` of `shape`, when there is one, gets its value, its digit count, and whether it began with
 * a zero.
 */
function readDigitRun(bytes: Uint8Array, i: number, end: number, slot: number): number {
  const first = i;
  const lead = bytes[i] as number;
  let value = lead - 48;
  for (i += 1; i < end; i += 1) {
    const digit = (bytes[i] as number) - 48;
    if (digit < 0 || digit > 9) break;
    value = value * 10 + digit;
  }
  if (slot < MAX_SLOTS) {
    const digits = i - first;
    slotValues[slot] = value;
    slotDigits[slot] = digits > 255 ? 255 : digits;
    slotPadded[slot] = lead === 48 && digits > 1 ? 1 : 0;
  }
  return i;
}

/**
 * Only the key of the line's shape, for a reader that needs nothing else (the evidence scan, which sees every byte of
 * every job): the same hashes as `readShapeBytes` without reading the numbers' values, so about half its cost.
 * Returns where it stopped, the key in `shape.key`; the slots are left as they were.
 */
export function readKeyBytes(bytes: Uint8Array, start: number, end: number): number {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  let runs = 0;
  let inRun = false;
  let i = start;
  for (; i < end; i += 1) {
    const c = bytes[i] as number;
    if (c === 10) break;
    if (c >= 48 && c <= 57) {
      inRun = true;
      continue;
    }
    if (inRun) {
      // A digit run counts as one mark, whatever its digits.
      inRun = false;
      runs += 1;
      h1 = Math.imul(h1 ^ 0x30, 0x01000193);
      h2 = Math.imul(h2 ^ 0x30, 0x5bd1e995);
    }
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
  }
  if (inRun) {
    runs += 1;
    h1 = Math.imul(h1 ^ 0x30, 0x01000193);
    h2 = Math.imul(h2 ^ 0x30, 0x5bd1e995);
  }
  shape.key = (h1 >>> 6) * 0x4000000 + (h2 >>> 6) + Math.min(runs, 1023) / 1024;
  return i;
}

/** A skeleton's mark for a digit run. */
const RUN = -1;

/**
 * The skeleton of the line in `bytes[start, end)` (no newline in it): its bytes with each digit run as one mark. Two
 * lines have the same skeleton exactly when they have the same shape, so a line can be tested against a shape by
 * comparing it with the skeleton, without hashing it.
 */
export function skeletonOf(bytes: Uint8Array, start: number, end: number): Int16Array {
  const marks: number[] = [];
  for (let i = start; i < end; i += 1) {
    const c = bytes[i] as number;
    if (!isDigit(c)) marks.push(c);
    else if (i === start || !isDigit(bytes[i - 1] as number)) marks.push(RUN);
  }
  return Int16Array.from(marks);
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;

/** How many lines the last `readRun` took. */
export const run = { lines: 0 };

/**
 * The hot path of a flood: reads, from `from`, the whole lines of `bytes[from, to)` that have the shape `skeleton`
 * describes, adding each one's numbers to `slots` (that shape's) as `addValues` does; stops at the first line of
 * another shape or without its newline before `to`. Returns where it stopped (a line's start), the count in
 * `run.lines`. One comparison per byte instead of a hash, and no look-up per line.
 */
export function readRun(bytes: Uint8Array, from: number, to: number, skeleton: Int16Array, slots: Slot[]): number {
  const marks = skeleton.length;
  let lines = 0;
  let start = from;
  let i = from;
  let k = 0;
  let count = 0;
  while (i < to) {
    const c = bytes[i] as number;
    if (k === marks) {
      if (c !== 10) break;
      // A whole line of this shape: its numbers are counted only now, so a line that turns out to differ adds none.
      addValues(slots);
      lines += 1;
      i += 1;
      start = i;
      k = 0;
      count = 0;
      continue;
    }
    const mark = skeleton[k] as number;
    if (mark !== RUN) {
      if (c !== mark) break;
      i += 1;
      k += 1;
      continue;
    }
    if (c < 48 || c > 57) break;
    i = readDigitRun(bytes, i, to, count);
    count += 1;
    k += 1;
  }
  run.lines = lines;
  return start;
}

const encoder = new TextEncoder();
/** Where `readShape` encodes a line; grown to the longest line seen (the callers bound their lines). */
let scratch = new Uint8Array(1024);

/**
 * The shape of one line of text (no newline in it), read as its UTF-8 bytes: the key is the one `readShapeBytes`
 * gives the same line's bytes, so lines read either way group together.
 */
export function readShape(text: string): void {
  // encodeInto writes at most three bytes per UTF-16 unit.
  if (scratch.length < text.length * 3) scratch = new Uint8Array(text.length * 3);
  const { written } = encoder.encodeInto(text, scratch);
  readShapeBytes(scratch, 0, written);
}

/** What one digit run did over the lines of a shape. */
export interface Slot {
  min: number;
  max: number;
  first: number;
  last: number;
  /** The difference between the first two values; null until there are two. */
  step: number | null;
  /** Every difference so far equals `step`. */
  even: boolean;
  /** Digits every value had so far; -1 once two differ. */
  width: number;
  /** A value began with a zero: the values are written padded to `width`, and need one. */
  padded: boolean;
  /** A value too long to be a safe integer was seen: only its presence can be said. */
  huge: boolean;
}

/** The value in slot `i` of `shape` began with a zero and has more digits. */
function isPadded(i: number): boolean {
  return shape.padded[i] === 1 && (shape.digits[i] as number) > 1;
}

/** The slots of a new shape, from its first line (the one in `shape`). */
export function firstSlots(): Slot[] {
  const slots: Slot[] = [];
  for (let i = 0; i < Math.min(shape.slots, MAX_SLOTS); i += 1) {
    const value = shape.values[i] as number;
    const digits = shape.digits[i] as number;
    slots.push({ min: value, max: value, first: value, last: value, step: null, even: true, width: digits, padded: isPadded(i), huge: digits > 15 });
  }
  return slots;
}

/** Adds the values of the line in `shape` (of the same shape) to `slots`. */
export function addValues(slots: Slot[]): void {
  const { values, digits, padded } = shape;
  for (let i = 0; i < slots.length; i += 1) {
    const slot = slots[i] as Slot;
    const value = values[i] as number;
    const width = digits[i] as number;
    if (width !== slot.width) {
      slot.width = -1;
      if (width > 15) slot.huge = true;
    }
    if (padded[i] === 1) slot.padded = true;
    const step = value - slot.last;
    if (slot.step === null) slot.step = step;
    else if (step !== slot.step) slot.even = false;
    if (value < slot.min) slot.min = value;
    else if (value > slot.max) slot.max = value;
    slot.last = value;
  }
}

const pad = (value: number, width: number): string => String(value).padStart(width, "0");

/** How one slot is written in a template, and whether that is exact. */
function describe(slot: Slot | undefined): { text: string; exact: boolean } {
  if (slot === undefined || slot.huge) return { text: "{~}", exact: false };
  // Padded values say themselves only when they all have one width (bash pads to it).
  const width = slot.padded ? slot.width : 0;
  if (slot.even && width >= 0 && slot.step !== null) {
    if (slot.step === 0) return { text: pad(slot.first, width), exact: true };
    const step = Math.abs(slot.step);
    return { text: `{${pad(slot.first, width)}..${pad(slot.last, width)}${step === 1 ? "" : `..${step}`}}`, exact: true };
  }
  return { text: `{~${slot.min}..${slot.max}}`, exact: false };
}

/**
 * The fold line for `count` lines of one shape, from its first line (`example`, `clipped` if cut) and its slots.
 * Exact only when the lines were one run (`contiguous`) and every number is constant or counts evenly.
 */
export function templateLine(example: string, clipped: boolean, count: number, contiguous: boolean, slots: readonly Slot[]): string {
  if (count === 1) return verbatimLine(example);
  if (clipped) return `${FOLD_MARK}~×${count}⟫ ${example}`;
  const constants = example.split(/\d+/);
  let exact = contiguous;
  let text = constants[0] as string;
  for (let i = 1; i < constants.length; i += 1) {
    const described = describe(slots[i - 1]);
    exact &&= described.exact;
    text += described.text + (constants[i] as string);
  }
  return `${FOLD_MARK}${exact ? "" : "~"}×${count}⟫ ${text}`;
}
