/**
 * Finds a job's evidence (actors/output/evidence-log.ts) in its raw output as it arrives, for every job, on the job's
 * own thread. Every byte is read once: a line costs the hash of its shape (actors/output/line-shape.ts), and whether
 * it is error-like is decided once per shape, since every evidence pattern treats all digit runs alike. Only the
 * error-like lines, the line before each and the lines of an open block are decoded and rendered (colours, cursor
 * codes and `\r` progress removed): the log keeps the raw bytes. A chunk that repeats one line (a flood) is recognised
 * with one native comparison and costs one line.
 */
import { Buffer } from "node:buffer";
import type { SourceName } from "../../mailbox/constants.ts";
import { isEvidence } from "../../shared/evidence.ts";
import { EvidenceLog } from "./evidence-log.ts";
import { readShapeBytes, shape } from "./line-shape.ts";
import { plainLine } from "./pipe-text.ts";

/** Shapes whose verdict is remembered; past them, lines of new shapes are decoded and tested one by one. */
const MAX_VERDICTS = 4_096;
/** A line still unfinished past this many bytes is taken as it stands (a flood with no newline). */
const MAX_OPEN_LINE_BYTES = 64 * 1024;

/** The newest plain line, kept undecoded: it is read only if the next line is error-like (a header). */
interface Previous {
  bytes: Uint8Array;
  start: number;
  end: number;
}

export class EvidenceScan {
  readonly log = new EvidenceLog();
  private lines = 0;
  private readonly open = new Map<SourceName, Uint8Array[]>();
  private previous: Previous | null = null;
  private readonly verdicts = new Map<number, boolean>();
  private readonly decoder = new TextDecoder();

  /** Whole lines read so far: the last one's number in the log. */
  get lineCount(): number {
    return this.lines;
  }

  /** Raw bytes of one source, in the order they reach the log. */
  feed(source: SourceName, chunk: Uint8Array): void {
    let at = 0;
    const pieces = this.open.get(source);
    if (pieces !== undefined) {
      const lf = chunk.indexOf(10);
      if (lf === -1) {
        pieces.push(chunk.slice());
        if (pieces.reduce((sum, piece) => sum + piece.length, 0) > MAX_OPEN_LINE_BYTES) this.close(source);
        return;
      }
      pieces.push(chunk.subarray(0, lf));
      this.open.delete(source);
      this.whole(Buffer.concat(pieces));
      at = lf + 1;
    }
    let tried = false;
    while (at < chunk.length) {
      const end = readShapeBytes(chunk, at, chunk.length);
      if (end === chunk.length) {
        this.open.set(source, [chunk.slice(at)]);
        break;
      }
      const plain = this.line(chunk, at, end);
      const next = end + 1;
      // The first plain line of a chunk: if the rest of the chunk only repeats it, those lines cost one comparison.
      if (plain && !tried && !this.log.open) {
        tried = true;
        const repeats = this.repeats(chunk, at, next);
        this.lines += repeats;
        at = next + repeats * (next - at);
        continue;
      }
      at = next;
    }
    // The previous line may lie in a chunk the process's reader reuses: keep a copy of it.
    const previous = this.previous;
    if (previous !== null && previous.bytes === chunk) this.previous = { bytes: chunk.slice(previous.start, previous.end), start: 0, end: previous.end - previous.start };
  }

  /** The end of the output: every unfinished line is a whole one. */
  finish(): void {
    for (const source of [...this.open.keys()]) this.close(source);
  }

  private close(source: SourceName): void {
    const pieces = this.open.get(source);
    this.open.delete(source);
    if (pieces !== undefined) this.whole(Buffer.concat(pieces));
  }

  /** A line put together from the pieces it arrived in. */
  private whole(line: Uint8Array): void {
    readShapeBytes(line, 0, line.length);
    this.line(line, 0, line.length);
  }

  /** How many whole lines after `next` repeat the line `[start, next)` exactly, up to the chunk's last newline. */
  private repeats(chunk: Uint8Array, start: number, next: number): number {
    const period = next - start;
    const whole = chunk.lastIndexOf(10) + 1;
    const count = Math.floor((whole - next) / period);
    if (count < 2) return 0;
    const view = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    return view.compare(view, start, start + count * period, next, next + count * period) === 0 ? count : 0;
  }

  /** The line `bytes[start, end)`, whose shape was just read; true when it was plain and no block is open. */
  private line(bytes: Uint8Array, start: number, end: number): boolean {
    this.lines += 1;
    const key = shape.key;
    let verdict = this.verdicts.get(key);
    let text: string | null = null;
    if (verdict === undefined) {
      text = this.text(bytes, start, end);
      verdict = isEvidence(text);
      if (this.verdicts.size < MAX_VERDICTS) this.verdicts.set(key, verdict);
    }
    if (verdict) {
      const previous = this.previous;
      const before = previous === null ? null : this.text(previous.bytes, previous.start, previous.end);
      this.previous = null;
      this.log.evidence(this.lines, text ?? this.text(bytes, start, end), before);
      return false;
    }
    const open = this.log.open;
    if (open) this.log.plain(this.lines, text ?? this.text(bytes, start, end));
    this.previous = this.log.open ? null : { bytes, start, end };
    return !open;
  }

  private text(bytes: Uint8Array, start: number, end: number): string {
    return plainLine(this.decoder.decode(bytes.subarray(start, end)));
  }
}
