/**
 * The digest of the output a shell read leaves out between its head and its tail: instead of a silent gap, the
 * shapes the omitted lines had (their text with numbers as slots) with how many lines had each and what their numbers
 * did, and the error-like lines (shared/evidence.ts), grouped by shape (actors/output/shape-groups.ts): the first few
 * of each shape verbatim, the rest counted in one fold, the last one verbatim. It sees each omitted byte once, as it
 * leaves the tail, in time linear in the bytes and in bounded memory: per shape, its first line and a few numbers.
 *
 * It reads bytes, not text. A line's shape is read from its bytes (actors/output/line-shape.ts), so a line of a shape
 * seen before costs a hash and a count, and a line of the same shape as the one before it (most lines of a flood) a
 * comparison with that shape's skeleton; only a line of a new shape, or an error-like line, is decoded. What the digest
 * writes is what a reader sees: each piece of whole lines is rendered before its shapes are read, on its bytes where
 * `render` can (for pipes: as they are, or without their colour codes), else decoded, rendered and encoded again (OSC
 * strings, `\r` overwrites: rare in a flood), so that examples, numbers and error-like lines are the rendered text's.
 *
 * Whether a line is evidence depends only on its shape (every evidence pattern treats all digit runs alike), so it is
 * decided once per new shape, not once per line.
 *
 * Lines are whole: the reader feeds the piece of the first omitted line that the head holds before the omitted bytes,
 * and the piece of the last one that the tail holds after them; a line that straddles two pieces is put together
 * before it is read. Written in the fold format of shared/fold.ts, a shape's template marked lossy (`~`) unless its
 * lines formed one run whose numbers count evenly.
 */
import { isEvidence } from "../../shared/evidence.ts";
import { DIGEST_END, digestHeading, FOLD_MARK, verbatimLine } from "../../shared/fold.ts";
import { addValues, firstSlots, readRun, readShape, readShapeBytes, run, shape, skeletonOf, templateLine, type Slot } from "./line-shape.ts";
import { ShapeGroups, type ShapeGroup } from "./shape-groups.ts";

/** Distinct shapes kept; lines of further shapes are counted together. */
const MAX_TEMPLATES = 24;
/** Shapes whose verdict is remembered; past them, lines of unknown shapes are decoded and tested one by one. */
const MAX_VERDICTS = 4_096;
/**
 * Error-like lines kept verbatim (the groups of their shapes add a fold and a last line each); past them, their count
 * and the last one.
 */
const MAX_EVIDENCE = 20;
/** A kept line (an example, evidence) is cut here, its length said. */
const MAX_LINE_CHARS = 1_000;
/** A line still unfinished past this many bytes is taken as it stands (a flood with no newline). */
const MAX_OPEN_LINE_BYTES = 64 * 1024;

interface Template {
  key: number;
  example: string;
  /** The example was cut at MAX_LINE_CHARS. */
  clipped: boolean;
  count: number;
  /** Times a line of this shape followed a line of another: 1 means one contiguous run. */
  runs: number;
  slots: Slot[];
  /** The shape as bytes, once a line of it was read from bytes: later lines are compared with it (`readRun`). */
  skeleton: Int16Array | null;
}

/** What a shape that is not a template is: error-like, or past the template budget. */
const EVIDENCE = 1;
const OTHER = 2;
type Verdict = Template | typeof EVIDENCE | typeof OTHER;

/**
 * What a reader sees of output: `text` renders lines; `bytes` renders UTF-8 bytes (whole lines, or one line) where it
 * can be done on bytes (possibly the same bytes), or gives null when only `text` can.
 */
export interface TextRender {
  text(text: string): string;
  bytes(bytes: Uint8Array, from: number, to: number): Uint8Array | null;
}

/** Output read as printed (a terminal's rows are rendered already). */
export const AS_PRINTED: TextRender = { text: (text) => text, bytes: (bytes, from, to) => bytes.subarray(from, to) };

type Item = { kind: "template"; template: Template } | { kind: "evidence"; text: string } | { kind: "group"; group: ShapeGroup };

const NEWLINE = 0x0a;
const CR = 0x0d;
const encoder = new TextEncoder();

export class MiddleDigest {
  private lines = 0;
  private bytes = 0;
  /** By shape key. */
  private readonly verdicts = new Map<number, Verdict>();
  private templates = 0;
  private readonly items: Item[] = [];
  private otherLines = 0;
  private previous: Template | null = null;
  private readonly evidence = new ShapeGroups();
  /** Shapes with an error-like line shown verbatim: only their groups are shown. */
  private readonly shownShapes = new Set<number>();
  private readonly shownGroups = new Set<ShapeGroup>();
  private verbatimEvidence = 0;
  /** Error-like lines past the budget: their count and the last one. */
  private moreEvidence = 0;
  private lastEvidence = "";
  /** The bytes of a line that began in an earlier piece and has not ended yet. */
  private open = new Uint8Array(256);
  private openLength = 0;
  private readonly render: TextRender;
  private readonly decoder = new TextDecoder("utf-8", { fatal: false });

  constructor(render: TextRender = AS_PRINTED) {
    this.render = render;
  }

  /** Omitted bytes, as they leave the tail, in order. */
  feedBytes(bytes: Uint8Array): void {
    this.bytes += bytes.length;
    let at = 0;
    if (this.openLength > 0) {
      // The line that began in an earlier piece ends in this one: read on its own, whole.
      const end = bytes.indexOf(NEWLINE);
      if (end === -1) {
        this.hold(bytes, 0, bytes.length);
        return;
      }
      this.hold(bytes, 0, end);
      this.lines += 1;
      this.openLine();
      at = end + 1;
    }
    const last = bytes.lastIndexOf(NEWLINE);
    if (last >= at) this.wholeLines(bytes, at, last + 1);
    if (bytes.length > Math.max(at, last + 1)) this.hold(bytes, Math.max(at, last + 1), bytes.length);
  }

  /** One omitted whole line, already rendered (a terminal's row), and its size in bytes. */
  feedLine(text: string, bytes: number): void {
    this.bytes += bytes;
    this.lines += 1;
    readShape(text);
    if (!this.counted()) this.needsText(text);
  }

  /** The digest's lines; the last omitted line ends here if the tail holds its end. */
  finish(): string[] {
    if (this.openLength > 0) {
      this.lines += 1;
      this.openLine();
    }
    return this.write();
  }

  /** Keeps `bytes[from, to)` as part of the open line; one past MAX_OPEN_LINE_BYTES is read in pieces, counted once. */
  private hold(bytes: Uint8Array, from: number, to: number): void {
    while (this.openLength + (to - from) > MAX_OPEN_LINE_BYTES) {
      const room = MAX_OPEN_LINE_BYTES - this.openLength;
      this.append(bytes, from, from + room);
      this.openLine();
      from += room;
    }
    this.append(bytes, from, to);
  }

  /** Reads the open line (or the piece of it held so far) and starts a new one. */
  private openLine(): void {
    const line = this.rendered(this.open, 0, this.openLength);
    readShapeBytes(line, 0, line.length);
    this.line(line, 0, line.length);
    this.openLength = 0;
  }

  /** `bytes[from, to)` as a reader sees them: rendered on the bytes where it can be, else as text. */
  private rendered(bytes: Uint8Array, from: number, to: number): Uint8Array {
    return this.render.bytes(bytes, from, to) ?? encoder.encode(this.render.text(this.decoder.decode(bytes.subarray(from, to))));
  }

  private append(bytes: Uint8Array, from: number, to: number): void {
    const length = this.openLength + (to - from);
    if (length > this.open.length) {
      const grown = new Uint8Array(Math.min(MAX_OPEN_LINE_BYTES, Math.max(length, this.open.length * 2)));
      grown.set(this.open.subarray(0, this.openLength));
      this.open = grown;
    }
    this.open.set(bytes.subarray(from, to), this.openLength);
    this.openLength = length;
  }

  /** The whole lines in `bytes[from, to)`, rendered first. */
  private wholeLines(bytes: Uint8Array, from: number, to: number): void {
    const lines = this.rendered(bytes, from, to);
    this.scan(lines, 0, lines.length);
  }

  /**
   * The whole lines in `bytes[from, to)`, each ending with a newline. The hot path: a line of the same shape as the
   * one before it (most lines of a flood) only adds its numbers to that shape's.
   */
  private scan(bytes: Uint8Array, from: number, to: number): void {
    let start = from;
    let lines = 0;
    while (start < to) {
      const previous = this.previous;
      if (previous?.skeleton) {
        // Lines of the previous line's shape (most lines of a flood): compared with it, their numbers counted.
        start = readRun(bytes, start, to, previous.skeleton, previous.slots);
        previous.count += run.lines;
        lines += run.lines;
        if (start >= to) break;
      }
      const end = readShapeBytes(bytes, start, to);
      lines += 1;
      this.line(bytes, start, end);
      const template = this.previous;
      if (template !== null && template.skeleton === null) template.skeleton = skeletonOf(bytes, start, end);
      start = end + 1;
    }
    this.lines += lines;
  }

  /** The line `bytes[start, end)` (no newline), whose shape was just read from those bytes. */
  private line(bytes: Uint8Array, start: number, end: number): void {
    if (this.counted()) return;
    // A CRLF line end is a line end: the `\r` stays in the shape (every line of the shape has it) but not in the text.
    this.needsText(this.decoder.decode(bytes.subarray(start, end > start && bytes[end - 1] === CR ? end - 1 : end)));
  }

  /** Counts the line whose shape was just read if its shape is a template or past the budget: no text needed. */
  private counted(): boolean {
    const verdict = this.verdicts.get(shape.key);
    if (typeof verdict === "object") this.count(verdict);
    else if (verdict === OTHER) this.other();
    return verdict !== undefined && verdict !== EVIDENCE;
  }

  /** A line whose shape was just read and whose text is needed: error-like, or the first of its shape. */
  private needsText(text: string): void {
    const key = shape.key;
    if (this.verdicts.get(key) === EVIDENCE) this.evidenceLine(text);
    else this.newShape(key, text);
  }

  /** The first line of a shape (in `shape`), as a reader sees it: evidence, a new template, or past the budget. */
  private newShape(key: number, text: string): void {
    if (isEvidence(text)) {
      this.remember(key, EVIDENCE);
      this.evidenceLine(text);
    } else if (this.templates < MAX_TEMPLATES) {
      const template: Template = { key, example: clip(text), clipped: text.length > MAX_LINE_CHARS, count: 0, runs: 0, slots: firstSlots(), skeleton: null };
      this.verdicts.set(key, template);
      this.templates += 1;
      this.items.push({ kind: "template", template });
      this.count(template);
    } else {
      this.remember(key, OTHER);
      this.other();
    }
  }

  private remember(key: number, verdict: Verdict): void {
    if (this.verdicts.size < MAX_VERDICTS + MAX_TEMPLATES) this.verdicts.set(key, verdict);
  }

  private count(template: Template): void {
    if (template !== this.previous) template.runs += 1;
    this.previous = template;
    template.count += 1;
    if (template.count > 1) addValues(template.slots);
  }

  private other(): void {
    this.previous = null;
    this.otherLines += 1;
  }

  /**
   * An error-like line: verbatim while the budget lasts, else counted in its shape's group, shown when that shape
   * had a line shown verbatim, so that grouping never hides a kind of error; past the budget, counted with the last.
   */
  private evidenceLine(line: string): void {
    this.previous = null;
    const text = clip(line);
    readShape(text);
    const key = shape.key;
    const group = this.evidence.add(text);
    if (group === null) {
      if (this.verbatimEvidence < MAX_EVIDENCE) {
        this.verbatimEvidence += 1;
        this.shownShapes.add(key);
        this.items.push({ kind: "evidence", text });
        return;
      }
    } else if (this.shownGroups.has(group)) {
      return;
    } else if (group.count === 1 && this.shownShapes.has(key)) {
      this.shownGroups.add(group);
      this.items.push({ kind: "group", group });
      return;
    }
    this.moreEvidence += 1;
    this.lastEvidence = text;
  }

  private write(): string[] {
    const out = [digestHeading(this.lines, this.bytes)];
    for (const item of this.items) {
      if (item.kind === "evidence") out.push(verbatimLine(item.text));
      else if (item.kind === "group") out.push(...this.evidence.lines(item.group));
      else out.push(templateLine(item.template.example, item.template.clipped, item.template.count, item.template.runs === 1, item.template.slots));
    }
    if (this.moreEvidence > 0) {
      out.push(`${FOLD_MARK}${this.moreEvidence} more error-like lines; the last of them:⟫`, verbatimLine(this.lastEvidence));
    }
    if (this.otherLines > 0) out.push(`${FOLD_MARK}${this.otherLines} more lines of other shapes⟫`);
    out.push(DIGEST_END);
    return out;
  }
}

function clip(line: string): string {
  return line.length <= MAX_LINE_CHARS ? line : `${line.slice(0, MAX_LINE_CHARS)}… (${line.length} characters)`;
}
