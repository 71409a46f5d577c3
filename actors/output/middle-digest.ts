/**
 * The digest of the output a shell read leaves out between its head and its tail: instead of a silent gap, the
 * shapes the omitted lines had (their text with numbers as slots) with how many lines had each and what their numbers
 * did, and the error-like lines (shared/evidence.ts), grouped by shape (actors/output/shape-groups.ts): the first few
 * of each shape verbatim, the rest counted in one fold, the last one verbatim. It sees each omitted byte once, as it
 * leaves the tail, in time linear in the bytes and in bounded memory: per shape, its first line and a few numbers.
 *
 * It reads bytes, not text. A line's shape is read from its bytes (actors/output/line-shape.ts), so a line of a shape
 * seen before costs a hash and a count; only a line of a new shape, or an error-like line, is decoded and rendered
 * (`render`: what a reader would see of it, e.g. pipe text without colour codes). A shape whose rendered lines differ
 * from their bytes (colour codes, carriage returns) is read again from the rendered text of each of its lines, so that
 * what the digest writes (examples, numbers, error-like lines) is always the rendered text.
 *
 * Whether a line is evidence depends only on its shape (every evidence pattern treats all digit runs alike), and so
 * does whether rendering changes it (colour codes and `\r` are in the shape; their digits are not), so both are
 * decided once per new shape, not once per line.
 *
 * Lines are whole: the reader feeds the piece of the first omitted line that the head holds before the omitted bytes,
 * and the piece of the last one that the tail holds after them; a line that straddles two pieces is put together
 * before it is read. Written in the fold format of shared/fold.ts, a shape's template marked lossy (`~`) unless its
 * lines formed one run whose numbers count evenly.
 */
import { isEvidence } from "../../shared/evidence.ts";
import { DIGEST_END, digestHeading, FOLD_MARK, verbatimLine } from "../../shared/fold.ts";
import { addValues, firstSlots, readShape, readShapeBytes, shape, templateLine, type Slot } from "./line-shape.ts";
import { ShapeGroups, type ShapeGroup } from "./shape-groups.ts";

/** Distinct shapes kept; lines of further shapes are counted together. */
const MAX_TEMPLATES = 24;
/** Shapes whose verdict is remembered; past them, lines of unknown shapes are decoded and tested one by one. */
const MAX_VERDICTS = 4_096;
/** Error-like lines kept verbatim (groups of a shape among them add their fold and last line); past them, their count and the last one. */
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
}

/** What a shape that is not a template is: error-like, past the template budget, or one to read again rendered. */
const EVIDENCE = 1;
const OTHER = 2;
const RENDER = 3;
type Verdict = Template | typeof EVIDENCE | typeof OTHER | typeof RENDER;

type Item = { kind: "template"; template: Template } | { kind: "evidence"; text: string } | { kind: "group"; group: ShapeGroup };

const NEWLINE = 0x0a;

export class MiddleDigest {
  private lines = 0;
  private bytes = 0;
  /** By shape key: raw keys (read from the bytes) and, for shapes that render differently, rendered keys. */
  private readonly verdicts = new Map<number, Verdict>();
  private templates = 0;
  private readonly items: Item[] = [];
  private otherLines = 0;
  private previous: Template | null = null;
  private readonly evidence = new ShapeGroups();
  /** Shapes (keys of their rendered text) with an error-like line shown verbatim: only their groups are shown. */
  private readonly shownShapes = new Set<number>();
  private readonly shownGroups = new Set<ShapeGroup>();
  private verbatimEvidence = 0;
  /** Error-like lines past the budget: their count and the last one. */
  private moreEvidence = 0;
  private lastEvidence = "";
  /** The bytes of a line that began in an earlier piece and has not ended yet. */
  private open = new Uint8Array(256);
  private openLength = 0;
  private readonly render: (text: string) => string;
  private readonly decoder = new TextDecoder("utf-8", { fatal: false });

  /** `render` makes a line (no newline) the text a reader would see. */
  constructor(render: (text: string) => string = (text) => text) {
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
    if (last >= at) this.scan(bytes, at, last + 1);
    if (bytes.length > Math.max(at, last + 1)) this.hold(bytes, Math.max(at, last + 1), bytes.length);
  }

  /** One omitted whole line, already rendered (a terminal's row), and its size in bytes. */
  feedLine(text: string, bytes: number): void {
    this.bytes += bytes;
    this.lines += 1;
    readShape(text);
    this.renderedLine(text);
  }

  /** The digest's lines; the last omitted line ends here if the tail holds its end. */
  finish(): string[] {
    if (this.openLength > 0) {
      this.lines += 1;
      this.openLine();
    }
    return this.write();
  }

  /** Keeps `bytes[from, to)` as part of the open line; a line past MAX_OPEN_LINE_BYTES is read in pieces, counted once. */
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
    readShapeBytes(this.open, 0, this.openLength);
    this.line(this.open, 0, this.openLength);
    this.openLength = 0;
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

  /**
   * The whole lines in `bytes[from, to)`, each ending with a newline. The hot path: a line of the same shape as the
   * one before it (most lines of a flood) only adds its numbers to that shape's.
   */
  private scan(bytes: Uint8Array, from: number, to: number): void {
    let start = from;
    let lines = 0;
    while (start < to) {
      const end = readShapeBytes(bytes, start, to);
      lines += 1;
      const previous = this.previous;
      if (previous !== null && previous.key === shape.key) {
        previous.count += 1;
        addValues(previous.slots);
      } else {
        this.line(bytes, start, end);
      }
      start = end + 1;
    }
    this.lines += lines;
  }

  /** The line `bytes[start, end)` (no newline), whose shape was just read from those bytes. */
  private line(bytes: Uint8Array, start: number, end: number): void {
    const key = shape.key;
    const verdict = this.verdicts.get(key);
    if (typeof verdict === "object") return this.count(verdict);
    if (verdict === OTHER) return this.other();
    const raw = this.decoder.decode(bytes.subarray(start, end));
    const text = this.render(raw);
    if (verdict === EVIDENCE) return this.evidenceLine(text);
    if (verdict === RENDER || text !== raw) {
      if (verdict === undefined) this.remember(key, RENDER);
      readShape(text);
      return this.renderedLine(text);
    }
    this.newShape(key, text);
  }

  /** A line as a reader sees it, its shape just read from that text. */
  private renderedLine(text: string): void {
    const key = shape.key;
    const verdict = this.verdicts.get(key);
    if (typeof verdict === "object") return this.count(verdict);
    if (verdict === OTHER) return this.other();
    if (verdict === EVIDENCE) return this.evidenceLine(text);
    this.newShape(key, text);
  }

  /** The first line of a shape (in `shape`), as a reader sees it: evidence, a new template, or past the budget. */
  private newShape(key: number, text: string): void {
    if (isEvidence(text)) {
      this.remember(key, EVIDENCE);
      this.evidenceLine(text);
    } else if (this.templates < MAX_TEMPLATES) {
      const template: Template = { key, example: clip(text), clipped: text.length > MAX_LINE_CHARS, count: 0, runs: 0, slots: firstSlots() };
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
