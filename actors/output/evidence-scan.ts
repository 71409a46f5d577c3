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
import { readKeyBytes, shape } from "./line-shape.ts";
import { plainLine } from "./pipe-text.ts";

/** Shapes whose verdict is remembered; past them, lines of new shapes are decoded and tested one by one. */
const MAX_VERDICTS = 4_096;
/** A line still unfinished past this many bytes is taken as it stands (a flood with no newline). */
const MAX_OPEN_LINE_BYTES = 64 * 1024;

export class EvidenceScan {
  readonly log = new EvidenceLog();
  private lines = 0;
  private readonly open = new Map<SourceName, Uint8Array[]>();
  /**
   * The newest plain line, kept undecoded as where it lies (no object per line): it is read only if the next line is
   * error-like (a header). `previousBytes` is null when there is none.
   */
  private previousBytes: Uint8Array | null = null;
  private previousStart = 0;
  private previousEnd = 0;
  private readonly verdicts = new Map<number, boolean>();
  /** The verdict of the last line's shape: a flood's lines mostly share one, and a Map look-up per line shows. */
  private lastKey = -1;
  private lastVerdict = false;
  private readonly decoder = new TextDecoder();

  /** Whole lines read so far: the last one's number in the log. */
  get lineCount(): number {
    return this.lines;
  }

  /** Raw bytes of one source, in the order they reach the log; `newlines` of them are line ends (counted already). */
  feed(source: SourceName, chunk: Uint8Array, newlines: number): void {
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
    // Lines of digits and punctuation alone (a counter, a table of figures) cannot be error-like: every evidence shape
    // needs a letter or a mark such as `✗`. Such a stretch costs a word-wise look and a newline count.
    const whole = chunk.lastIndexOf(10) + 1;
    if (whole > at && !this.log.open && letterless(chunk, at, whole)) {
      // Every newline of the chunk but the one that ended an unfinished line lies in the stretch.
      this.lines += at > 0 ? newlines - 1 : newlines;
      this.previousBytes = null;
      this.lastKey = -1;
      at = whole;
    }
    let tried = false;
    while (at < chunk.length) {
      const end = readKeyBytes(chunk, at, chunk.length);
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
    if (this.previousBytes === chunk) {
      this.previousBytes = chunk.slice(this.previousStart, this.previousEnd);
      this.previousEnd -= this.previousStart;
      this.previousStart = 0;
    }
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
    readKeyBytes(line, 0, line.length);
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
    let text: string | null = null;
    let verdict = this.lastVerdict;
    if (key !== this.lastKey) {
      const known = this.verdicts.get(key);
      if (known === undefined) {
        text = this.text(bytes, start, end);
        verdict = isEvidence(text);
        if (this.verdicts.size < MAX_VERDICTS) this.verdicts.set(key, verdict);
      } else {
        verdict = known;
      }
      this.lastKey = key;
      this.lastVerdict = verdict;
    }
    if (verdict) {
      const previous = this.previousBytes;
      const before = previous === null ? null : this.text(previous, this.previousStart, this.previousEnd);
      this.previousBytes = null;
      this.log.evidence(this.lines, text ?? this.text(bytes, start, end), before);
      return false;
    }
    const open = this.log.open;
    if (open) this.log.plain(this.lines, text ?? this.text(bytes, start, end));
    if (this.log.open) {
      this.previousBytes = null;
    } else {
      this.previousBytes = bytes;
      this.previousStart = start;
      this.previousEnd = end;
    }
    return !open;
  }

  private text(bytes: Uint8Array, start: number, end: number): string {
    return plainLine(this.decoder.decode(bytes.subarray(start, end)));
  }
}

/** Bits 6 and 7 of each byte of a word, as an Int32. */
const HIGH_BITS = 0xc0c0c0c0 | 0;

/** Every byte of `bytes[from, to)` is below 0x40 (digits, punctuation, spaces, line ends): read four at a time. */
function letterless(bytes: Uint8Array, from: number, to: number): boolean {
  let at = from;
  const aligned = Math.min(to, from + ((4 - ((bytes.byteOffset + from) & 3)) & 3));
  for (; at < aligned; at += 1) if ((bytes[at] as number) >= 0x40) return false;
  const words = (to - at) >>> 2;
  if (words > 0) {
    // Int32, not Uint32: a word over 2^31 read from a Uint32Array is no longer a small integer.
    const view = new Int32Array(bytes.buffer, bytes.byteOffset + at, words);
    let seen = 0;
    for (let i = 0; i < words; i += 1) seen |= view[i] as number;
    if ((seen & HIGH_BITS) !== 0) return false;
    at += words * 4;
  }
  for (; at < to; at += 1) if ((bytes[at] as number) >= 0x40) return false;
  return true;
}
