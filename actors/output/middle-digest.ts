/**
 * The digest of the output a shell read leaves out between its head and its tail: instead of a silent gap, the
 * shapes the omitted lines had (their text with numbers as slots) with how many lines had each and what their numbers
 * did, and every evidence line (shared/evidence.ts) verbatim up to a budget. It sees each omitted byte once, as it
 * leaves the tail, in time linear in the bytes and in bounded memory: per shape, its first line and a few numbers.
 *
 * Whether a line is evidence depends only on its shape (every evidence pattern treats all digit runs alike), so the
 * evidence patterns run once per new shape, not once per line.
 *
 * Lines are whole: the reader feeds the piece of the first omitted line that the head holds before the omitted bytes,
 * and the piece of the last one that the tail holds after them. Written in the fold format of shared/fold.ts, a
 * shape's template marked lossy (`~`) unless its lines formed one run whose numbers count evenly.
 */
import { isEvidence } from "../../shared/evidence.ts";
import { DIGEST_END, digestHeading, FOLD_MARK, verbatimLine } from "../../shared/fold.ts";
import { addValues, firstSlots, readShape, shape, templateLine, type Slot } from "./line-shape.ts";

/** Distinct shapes kept; lines of further shapes are counted together. */
const MAX_TEMPLATES = 24;
/** Shapes whose evidence verdict is remembered; past them, lines of unknown shapes are tested one by one. */
const MAX_VERDICTS = 4_096;
/** Evidence lines kept verbatim; past them, their count and the last one. */
const MAX_EVIDENCE = 20;
/** A kept line (an example, evidence) is cut here, its length said. */
const MAX_LINE_CHARS = 1_000;
/** A line still unfinished past this many characters is taken as it stands (a flood with no newline). */
const MAX_OPEN_LINE_CHARS = 64 * 1024;

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

type Item = { kind: "template"; template: Template } | { kind: "evidence"; text: string };

export class MiddleDigest {
  private lines = 0;
  private bytes = 0;
  private readonly templates = new Map<number, Template>();
  /** Shapes known to be evidence (true) or past the template budget (false). */
  private readonly verdicts = new Map<number, boolean>();
  private readonly items: Item[] = [];
  private otherLines = 0;
  private evidenceCount = 0;
  private lastEvidence: string | null = null;
  private previous: Template | null = null;
  private open = "";
  private readonly decoder = new TextDecoder("utf-8", { fatal: false });

  /** Omitted bytes, as they leave the tail, in order; `transform` makes them the text a reader would see. */
  feedBytes(bytes: Uint8Array, transform: (text: string) => string): void {
    this.bytes += bytes.length;
    this.feedText(transform(this.decoder.decode(bytes, { stream: true })));
  }

  /** One omitted whole line (a terminal's rendered row) and its size in bytes. */
  feedLine(text: string, bytes: number): void {
    this.bytes += bytes;
    this.feedText(`${text}\n`);
  }

  /** The digest's lines; the last omitted line ends here if the tail holds its end. */
  finish(): string[] {
    const rest = this.decoder.decode();
    if (rest !== "") this.feedText(rest);
    if (this.open !== "") this.scan(`${this.open}\n`, 0);
    this.open = "";
    return this.render();
  }

  private feedText(text: string): void {
    let at = 0;
    if (this.open !== "") {
      // The line that began in an earlier piece ends in this one: scanned on its own, whole.
      const end = text.indexOf("\n");
      if (end === -1) {
        this.open += text;
        this.bound();
        return;
      }
      this.scan(`${this.open}${text.slice(0, end + 1)}`, 0);
      this.open = "";
      at = end + 1;
    }
    const last = text.lastIndexOf("\n");
    if (last >= at) this.scan(text, at, last + 1);
    this.open = text.slice(Math.max(at, last + 1));
    this.bound();
  }

  /** A line still open past MAX_OPEN_LINE_CHARS is not one a reader could use whole: taken as it stands. */
  private bound(): void {
    if (this.open.length <= MAX_OPEN_LINE_CHARS) return;
    this.scan(`${this.open}\n`, 0);
    this.lines -= 1;
    this.open = "";
  }

  /**
   * The whole lines in `text[from, to)`, each ending with a newline. The hot path: a line of the same shape as the
   * one before it (most lines of a flood) only adds its numbers to that shape's.
   */
  private scan(text: string, from: number, to = text.length): void {
    let start = from;
    let lines = 0;
    while (start < to) {
      const end = readShape(text, start);
      lines += 1;
      const previous = this.previous;
      if (previous !== null && previous.key === shape.key) {
        previous.count += 1;
        addValues(previous.slots);
      } else {
        this.take(text, start, end);
      }
      start = end + 1;
    }
    this.lines += lines;
  }

  /** The line `text[start, end)`, whose shape was just read. */
  private take(text: string, start: number, end: number): void {
    const key = shape.key;
    const known = this.previous !== null && this.previous.key === key ? this.previous : this.templates.get(key);
    if (known !== undefined) {
      this.count(known);
      return;
    }
    this.previous = null;
    let verdict = this.verdicts.get(key);
    if (verdict === false) {
      this.otherLines += 1;
      return;
    }
    const line = text.slice(start, end);
    if (verdict === undefined) {
      verdict = isEvidence(line);
      // A shape that is not evidence becomes a template while there is room: only the others need remembering.
      if ((verdict || this.templates.size >= MAX_TEMPLATES) && this.verdicts.size < MAX_VERDICTS) this.verdicts.set(key, verdict);
    }
    if (verdict) {
      this.evidenceCount += 1;
      if (this.evidenceCount <= MAX_EVIDENCE) this.items.push({ kind: "evidence", text: clip(line) });
      else this.lastEvidence = clip(line);
    } else if (this.templates.size < MAX_TEMPLATES) {
      const template: Template = { key, example: clip(line), clipped: line.length > MAX_LINE_CHARS, count: 0, runs: 0, slots: firstSlots() };
      this.templates.set(key, template);
      this.items.push({ kind: "template", template });
      this.count(template);
    } else {
      this.otherLines += 1;
    }
  }

  private count(template: Template): void {
    if (template !== this.previous) template.runs += 1;
    this.previous = template;
    template.count += 1;
    if (template.count > 1) addValues(template.slots);
  }

  private render(): string[] {
    const out = [digestHeading(this.lines, this.bytes)];
    for (const item of this.items) {
      if (item.kind === "evidence") out.push(verbatimLine(item.text));
      else out.push(templateLine(item.template.example, item.template.clipped, item.template.count, item.template.runs === 1, item.template.slots));
    }
    if (this.lastEvidence !== null) {
      out.push(`${FOLD_MARK}${this.evidenceCount - MAX_EVIDENCE} more error-like lines; the last of them:⟫`, verbatimLine(this.lastEvidence));
    }
    if (this.otherLines > 0) out.push(`${FOLD_MARK}${this.otherLines} more lines of other shapes⟫`);
    out.push(DIGEST_END);
    return out;
  }
}

function clip(line: string): string {
  return line.length <= MAX_LINE_CHARS ? line : `${line.slice(0, MAX_LINE_CHARS)}… (${line.length} characters)`;
}
