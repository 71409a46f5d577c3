/**
 * What a person watching a PTY would read, as plain text: the job's bytes go through a headless terminal emulator
 * (xterm.js), and a read takes the rendered lines since the previous read. Carriage-return progress bars collapse to
 * their last state, cursor movement and line clears are applied, colours are dropped, and a full-screen program
 * (alternate screen: top, vim, less) reads as its current screen.
 *
 * A read returns, in order: lines that scrolled off the screen since the previous read (bounded: the first
 * `headBytes` and the last `tailBytes` of them, the rest counted as omitted), then the screen from its first line
 * that is new or differs from what the previous read returned. Lines the previous read already returned unchanged
 * are not repeated, so a REPL answers with the echoed input, its result and the new prompt.
 *
 * Pure and synchronous (no Pi, no I/O), so it can run inside the job actor that owns the bytes. Memory is bounded:
 * the emulator keeps the screen and a short scrollback, and input is written in pieces small enough that no line
 * leaves the scrollback before it has been harvested into the bounded pending read.
 */
import xterm from "@xterm/headless";
import type { IBuffer, IMarker, Terminal as XTerminal } from "@xterm/headless";
import { MiddleDigest } from "./middle-digest.ts";

const { Terminal } = xterm;

/**
 * Input is written in pieces that cannot scroll more lines than the scrollback holds, so every line that leaves the
 * screen is harvested before the emulator recycles it: a piece ends after `PIECE_BYTES` bytes or `PIECE_LINE_MOVES`
 * bytes that can move to a new line (LF, VT, FF, and ESC for IND/NEL), and at the narrowest PTY (20 columns) its other
 * bytes can wrap onto at most `PIECE_BYTES / 20` more lines.
 */
const PIECE_BYTES = 1024;
const PIECE_LINE_MOVES = 64;
const SCROLLBACK_LINES = PIECE_LINE_MOVES + Math.ceil(PIECE_BYTES / 20) + 32;

export interface TerminalTextOptions {
  cols: number;
  rows: number;
  headBytes: number;
  tailBytes: number;
}

export interface RenderedRead {
  /** The rendered lines, joined with newlines; an omission marker where lines were left out. */
  text: string;
  /** UTF-8 bytes of rendered lines left out between head and tail. */
  omittedBytes: number;
  /** The digest of the lines left out (a soft-wrapped line's rows count as lines there); null when none were. */
  middle: string[] | null;
}

/** A line as it leaves the emulator; `wrapped` continues the previous line (the terminal soft-wrapped it). */
interface Row {
  text: string;
  wrapped: boolean;
}

/** xterm's synchronous write, used by its own tests; the public `write` parses on a later tick. */
interface SyncCore {
  writeSync(data: string | Uint8Array): void;
}

export function renderedOmissionMarker(omittedBytes: number): string {
  return `[… ${omittedBytes} bytes of rendered lines omitted; the raw output is in log_path …]`;
}

const utf8Length = (text: string): number => Buffer.byteLength(text, "utf8");

/**
 * Lines bounded as the first `headBytes` and the last `tailBytes`, the rest counted. Each line enters once and leaves
 * at most once, so pushing is constant work.
 */
class BoundedLines {
  private head: Row[] = [];
  private headUsed = 0;
  private tail: Row[] = [];
  /** UTF-8 size (plus its newline) of each tail row. */
  private tailSizes: number[] = [];
  private tailFirst = 0;
  private tailUsed = 0;
  private omitted = 0;
  private middle: MiddleDigest | null = null;
  private readonly headBytes: number;
  private readonly tailBytes: number;

  constructor(headBytes: number, tailBytes: number) {
    this.headBytes = headBytes;
    this.tailBytes = tailBytes;
  }

  push(row: Row): void {
    const size = utf8Length(row.text) + 1;
    if (this.tail.length === this.tailFirst && this.headUsed + size <= this.headBytes) {
      this.head.push(row);
      this.headUsed += size;
      return;
    }
    this.tail.push(row);
    this.tailSizes.push(size);
    this.tailUsed += size;
    while (this.tailFirst < this.tail.length - 1 && this.tailUsed - this.tailSizes[this.tailFirst]! >= this.tailBytes) {
      const dropped = this.tailSizes[this.tailFirst]!;
      this.tailUsed -= dropped;
      this.omitted += dropped;
      (this.middle ??= new MiddleDigest()).feedLine(this.tail[this.tailFirst]!.text, dropped);
      this.tailFirst += 1;
    }
    if (this.tailFirst > 256 && this.tailFirst * 2 > this.tail.length) {
      this.tail = this.tail.slice(this.tailFirst);
      this.tailSizes = this.tailSizes.slice(this.tailFirst);
      this.tailFirst = 0;
    }
  }

  /** Everything held, as text, and clears. A last line longer than the whole tail keeps its end. */
  take(): RenderedRead {
    let tail = this.tail.slice(this.tailFirst);
    let omittedBytes = this.omitted;
    if (tail.length === 1 && this.tailUsed > this.tailBytes) {
      const only = tail[0]!;
      // Code points of at most four UTF-8 bytes each, so the kept end stays within the tail's bytes.
      const keep = Math.max(0, Math.floor(this.tailBytes / 4));
      const cut = [...only.text];
      const kept = cut.slice(Math.max(0, cut.length - keep)).join("");
      omittedBytes += utf8Length(only.text) - utf8Length(kept);
      tail = [{ text: kept, wrapped: false }];
    }
    const parts = joinRows(this.head);
    if (omittedBytes > 0) parts.push(renderedOmissionMarker(omittedBytes));
    parts.push(...joinRows(tail));
    this.head = [];
    this.headUsed = 0;
    this.tail = [];
    this.tailSizes = [];
    this.tailFirst = 0;
    this.tailUsed = 0;
    this.omitted = 0;
    const middle = this.middle?.finish() ?? null;
    this.middle = null;
    return { text: parts.join("\n"), omittedBytes, middle };
  }
}

/** Soft-wrapped rows become the logical line they are. */
function joinRows(rows: readonly Row[]): string[] {
  const lines: string[] = [];
  for (const row of rows) {
    if (row.wrapped && lines.length > 0) lines[lines.length - 1] += row.text;
    else lines.push(row.text);
  }
  return lines;
}

function rowOf(buffer: IBuffer, y: number): Row {
  const line = buffer.getLine(y);
  return line === undefined ? { text: "", wrapped: false } : { text: line.translateToString(true), wrapped: line.isWrapped };
}

export class TerminalText {
  private readonly term: XTerminal;
  private readonly core: SyncCore;
  private readonly pending: BoundedLines;
  /** The first line not yet harvested, and its absolute index (lines since the job started). */
  private mark: IMarker;
  private markAbs = 0;
  /** Absolute index of the normal buffer's first line, as of the latest harvest. */
  private base = 0;
  /** Scrollback lines harvested while the alternate screen was active (see harvest). */
  private harvestedInAlternate: number | null = null;
  /** What the previous read returned of the normal screen: absolute line index → text. */
  private returned = new Map<number, string>();
  /** Absolute index just past the last line the previous read returned. */
  private returnedEnd = 0;
  /** Since the previous read, a line differed from what was returned: every later line is new too. */
  private diverged = false;
  private fed = 0;

  constructor(options: TerminalTextOptions) {
    this.term = new Terminal({
      cols: options.cols,
      rows: options.rows,
      scrollback: SCROLLBACK_LINES,
      allowProposedApi: true,
      // writeSync warns through the log service on every call otherwise.
      logLevel: "off",
    });
    const core = (this.term as unknown as { _core?: Partial<SyncCore> })._core;
    if (typeof core?.writeSync !== "function") throw new Error("@xterm/headless has no synchronous write; its version is not the one pi-jobs pins");
    this.core = core as SyncCore;
    this.mark = this.marker();
    this.pending = new BoundedLines(options.headBytes, options.tailBytes);
  }

  /** Raw bytes received since the previous read. */
  get unreadBytes(): number {
    return this.fed;
  }

  feed(bytes: Uint8Array): void {
    this.fed += bytes.length;
    let at = 0;
    while (at < bytes.length) {
      const end = pieceEnd(bytes, at);
      this.core.writeSync(bytes.subarray(at, end));
      this.harvest();
      at = end;
    }
  }

  resize(cols: number, rows: number): void {
    this.harvest();
    this.term.resize(cols, rows);
    // A resize reflows and may push lines into the scrollback.
    this.harvest();
  }

  /** The rendered lines since the previous read (see the module comment). */
  take(): RenderedRead {
    this.harvest();
    const buffer = this.term.buffer.active;
    if (buffer.type === "alternate") {
      // A full-screen program: its whole current screen, every time.
      for (const row of screenRows(buffer)) this.pending.push(row);
    } else {
      const rows = screenRows(buffer);
      const returned = new Map<number, string>();
      const top = this.base + buffer.baseY;
      rows.forEach((row, y) => {
        const at = top + y;
        returned.set(at, row.text);
        this.offer(at, row);
      });
      this.returned = returned;
      this.returnedEnd = top + rows.length;
    }
    this.diverged = false;
    this.fed = 0;
    return this.pending.take();
  }

  dispose(): void {
    this.term.dispose();
  }

  /**
   * Moves lines that scrolled off the normal screen since the previous harvest into the pending read. A marker holds
   * the first line not yet harvested: xterm moves it as the scrollback drops old lines, which gives the absolute
   * index of every line. Markers can only be set on the active buffer; while a full-screen program shows the
   * alternate screen nothing can scroll into the normal buffer, so the lines harvested then are remembered by count.
   */
  private harvest(): void {
    const normal = this.term.buffer.normal;
    const end = normal.baseY;
    const markLine = this.mark.line >= 0 ? this.mark.line : 0;
    const first = this.markAbs - markLine;
    const start = Math.max(markLine, this.harvestedInAlternate ?? 0);
    for (let y = start; y < end; y += 1) this.offer(first + y, rowOf(normal, y));
    if (this.term.buffer.active.type === "alternate") {
      this.harvestedInAlternate = end;
      return;
    }
    this.harvestedInAlternate = null;
    this.base = first;
    if (end === markLine) return;
    this.mark.dispose();
    this.mark = this.marker();
    this.markAbs = first + end;
  }

  /** A marker on the normal screen's first row (only called while the normal buffer is active). */
  private marker(): IMarker {
    const mark = this.term.registerMarker(-this.term.buffer.normal.cursorY);
    if (mark === undefined) throw new Error("terminal emulator refused a marker on the normal screen");
    return mark;
  }

  /** A line is skipped while it is one the previous read returned, unchanged, and nothing before it changed. */
  private offer(at: number, row: Row): void {
    if (!this.diverged && at < this.returnedEnd && this.returned.get(at) === row.text) return;
    this.diverged = true;
    this.pending.push(row);
  }
}

/** Where the piece that starts at `from` ends (see PIECE_BYTES). */
function pieceEnd(bytes: Uint8Array, from: number): number {
  const limit = Math.min(bytes.length, from + PIECE_BYTES);
  let moves = 0;
  for (let i = from; i < limit; i += 1) {
    const byte = bytes[i]!;
    if ((byte >= 0x0a && byte <= 0x0c) || byte === 0x1b) {
      moves += 1;
      if (moves === PIECE_LINE_MOVES) return i + 1;
    }
  }
  return limit;
}

/** The screen's rows down to its last non-blank one. */
function screenRows(buffer: IBuffer): Row[] {
  const rows: Row[] = [];
  let last = -1;
  const top = buffer.baseY;
  const height = buffer.length - top;
  for (let y = 0; y < height; y += 1) {
    const row = rowOf(buffer, top + y);
    rows.push(row);
    if (row.text.length > 0) last = y;
  }
  return rows.slice(0, last + 1);
}
