/**
 * A job's evidence: the error-like lines of its whole run (shared/evidence.ts), each with the lines that belong to it
 * (a traceback's frames and final exception, a compiler's code frame and carets, `at …` frames, a test runner's
 * expected/received block) as one block, and the line number of each line in the log. A report's tail shows how a
 * run ended; the evidence shows what went wrong wherever it was printed: make's first error printed near the start,
 * a traceback in the middle of a log whose run exited 0.
 *
 * Pure and bounded: the scanner (actors/output/evidence-scan.ts) hands it the evidence lines, the line before each
 * (a header such as `f101.c: In function 'f101':`) and, while a block is open, the lines after it. Blocks whose first
 * line has a shape already seen GROUP_VERBATIM times are grouped (actors/output/shape-groups.ts); the first
 * MAX_BLOCKS blocks are kept, then only their count and the last block. A long block keeps its first and last lines
 * (a traceback's cause is at its end). How much of it a report shows is the host's choice (host/evidence-text.ts).
 *
 * Written in the fold format of shared/fold.ts, each line as `N: text` with N its line in the log, so a group's fold
 * says the range of lines it stands for: `⟪~×9996⟫ {4..9999}: src/pkg_{~1..9999}/…`.
 */
import { indentOf, isContinuation, isHeader } from "../../shared/evidence.ts";
import { FOLD_MARK } from "../../shared/fold.ts";
import { readShape, shape } from "./line-shape.ts";
import { ShapeGroups, type ShapeGroup } from "./shape-groups.ts";
import type { Evidence, EvidenceBlock } from "../../mailbox/evidence.ts";

/** Blocks kept whole; past them, their count and the last one. */
const MAX_BLOCKS = 20;
/** A block keeps its first BLOCK_HEAD and last BLOCK_TAIL lines; the lines between are counted. */
const BLOCK_HEAD = 10;
const BLOCK_TAIL = 8;
/** Lines that do not belong to a block and still do not end it, if an error line comes right after them. */
const MAX_GAP = 2;
/** A kept line is cut here, its length said. */
const MAX_LINE_CHARS = 300;

interface Line {
  no: number;
  text: string;
}

interface Block {
  /** The error-like line that opened it. */
  headline: string;
  head: Line[];
  /** The newest lines past the head, at most BLOCK_TAIL. */
  tail: Line[];
  /** Lines between head and tail, not kept. */
  skipped: number;
  /** The indentation of its least indented error line: lines two columns deeper belong to it. */
  indent: number;
  /**
   * Up to MAX_GAP lines after the last one that do not belong to it (blank lines, a test's heading): they join the
   * block if another kind of error line follows them (pytest's `E   assert 41 == 42`, a blank line, then
   * `test_mod_03.py:55: AssertionError`), blank ones also if a line that belongs to it does; otherwise the block ends.
   */
  gap: Line[];
}

type Item = { kind: "block"; block: Block } | { kind: "group"; group: ShapeGroup; line: number };

const clip = (text: string): string => (text.length <= MAX_LINE_CHARS ? text : `${text.slice(0, MAX_LINE_CHARS)}… (${text.length} characters)`);
const written = (line: Line): string => `${line.no}: ${line.text}`;

export class EvidenceLog {
  private readonly groups = new ShapeGroups();
  private readonly items: Item[] = [];
  /** Blocks among the items. */
  private kept = 0;
  /** Blocks past MAX_BLOCKS: how many, their lines, and the newest of them. */
  private readonly past = { blocks: 0, lines: 0, last: null as Block | null };
  /** The block lines are being added to; a grouped block (counted in its group) keeps no lines. */
  private current: { block: Block | null; key: number } | null = null;
  private seen = 0;

  /** Error-like lines seen so far. */
  get count(): number {
    return this.seen;
  }

  /** A block is open: the next line's text is wanted, to see whether it belongs to it. */
  get open(): boolean {
    return this.current !== null;
  }

  /** Line `no` is error-like; `before` is the line before it when that one was plain (a possible header). */
  evidence(no: number, text: string, before: string | null): void {
    this.seen += 1;
    readShape(text);
    const key = shape.key;
    const current = this.current;
    // Another kind of error line right after one (a traceback's final exception, `Caused by:`) belongs to its block
    // while the block is short; the same kind again (the next compiler error), or any error line after a long block,
    // opens a block of its own, so that no error is lost among a block's skipped lines.
    if (current !== null && current.block !== null && current.key !== key && current.block.head.length < BLOCK_HEAD) {
      this.closeGap(current.block);
      this.append(current.block, { no, text: clip(text) });
      // What belongs to the block is measured from its least indented error line: vitest's ` FAIL …` at column 1,
      // then `AssertionError: …` at 0 and its diff at 2.
      current.block.indent = Math.min(current.block.indent, indentOf(text));
      return;
    }
    this.openBlock(no, clip(text), key, before);
  }

  /** Line `no` is plain; called only while a block is open. */
  plain(no: number, text: string): void {
    const current = this.current;
    if (current === null) return;
    const block = current.block;
    const belongs = text.trim() !== "" && isContinuation(text, block?.indent ?? 0);
    if (block === null) {
      // A grouped block keeps no lines: it ends where its lines end.
      if (!belongs) this.current = null;
      return;
    }
    if (belongs && block.gap.every((line) => line.text === "")) {
      this.closeGap(block);
      this.append(block, { no, text: clip(text) });
      return;
    }
    if (belongs || block.gap.length >= MAX_GAP) {
      this.current = null;
      return;
    }
    block.gap.push({ no, text: text.trim() === "" ? "" : clip(text) });
  }

  /**
   * The evidence so far, without the lines at or after line `before` (a monitor's report shows those in its tail):
   * every block kept, a group as a block of its fold and its last line, and past MAX_BLOCKS the count of the blocks
   * left out and the last one.
   */
  snapshot(before = Number.POSITIVE_INFINITY): Evidence {
    const blocks: EvidenceBlock[] = [];
    for (const item of this.items) {
      const block = item.kind === "group" ? { line: item.line, headline: item.group.example.slice(item.group.example.indexOf(": ") + 2), lines: this.groups.lines(item.group) } : blockOf(item.block, before);
      if (block !== null && block.line < before) blocks.push(block);
    }
    const last = this.past.last === null ? null : blockOf(this.past.last, before);
    if (last !== null) blocks.push(last);
    return { count: this.seen, blocks, omitted: this.past.blocks - (last === null ? 0 : 1) };
  }

  private openBlock(no: number, text: string, key: number, before: string | null): void {
    const group = this.groups.add(`${no}: ${text}`);
    if (group !== null) {
      if (group.count === 1) this.items.push({ kind: "group", group, line: no });
      this.current = { block: null, key };
      return;
    }
    const header = before !== null && isHeader(before) ? [{ no: no - 1, text: clip(before) }] : [];
    const block: Block = { headline: text, indent: indentOf(text), head: [...header, { no, text }], tail: [], skipped: 0, gap: [] };
    this.current = { block, key };
    if (this.kept < MAX_BLOCKS) {
      this.kept += 1;
      this.items.push({ kind: "block", block });
    } else {
      this.past.blocks += 1;
      this.past.lines += block.head.length;
      this.past.last = block;
    }
  }

  /** The lines of a block's gap join it: what followed them belongs to it. */
  private closeGap(block: Block): void {
    const gap = block.gap;
    block.gap = [];
    for (const line of gap) this.append(block, line);
  }

  private append(block: Block, line: Line): void {
    if (block === this.past.last) this.past.lines += 1;
    if (block.head.length < BLOCK_HEAD) {
      block.head.push(line);
      return;
    }
    block.tail.push(line);
    if (block.tail.length > BLOCK_TAIL) {
      block.tail.shift();
      block.skipped += 1;
    }
  }
}

/** A block as written: its head, the count of lines skipped, its tail; only the lines before `before`, if any. */
function blockOf(block: Block, before: number): EvidenceBlock | null {
  const head = block.head.filter((line) => line.no < before);
  if (head.length === 0) return null;
  const lines = head.map(written);
  const tail = block.tail.filter((line) => line.no < before);
  if (block.skipped > 0 && tail.length > 0) lines.push(`${FOLD_MARK}${block.skipped} more lines⟫`);
  lines.push(...tail.map(written));
  return { line: (head[0] as Line).no, headline: block.headline, lines };
}
