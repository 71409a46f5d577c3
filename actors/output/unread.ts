/**
 * A shell job's unread output, kept in its actor: the first `headBytes` and the last `tailBytes` since the previous
 * read, and between them a digest of what fell out (actors/output/middle-digest.ts): the omitted bytes pass through
 * it once, as they leave the tail. Feeding a chunk is constant work apart from that (a reference to its bytes, plus
 * at most one copy into the head); decoding the head and tail happens only when a tool reads, and only the bounded
 * result crosses to the host. A read that leaves bytes out cuts on line boundaries, so that neither side shows a
 * piece of a line.
 *
 * `feed(source, bytes)` / `take(final)` is the whole interface, so a text transform per source (terminal
 * emulation for a PTY, escape stripping for pipes) can be put between the process and this buffer.
 */
import type { SourceName } from "../../mailbox/constants.ts";
import { incompleteSuffix, leadingContinuations } from "../../shared/utf8.ts";
import { AS_PRINTED, MiddleDigest, type TextRender } from "./middle-digest.ts";

export interface TakenText {
  /** Decoded text (raw: control characters are escaped later, where the text meets the model). */
  text: string;
  /** Bytes this read covered, including the omitted ones. */
  bytes: number;
  /** Bytes left out between head and tail. */
  omittedBytes: number;
  /** The digest of the omitted bytes, in place of the omission marker in `text`; null when nothing was left out. */
  middle: string[] | null;
}

export function omissionMarker(omittedBytes: number): string {
  return `\n[… ${omittedBytes} bytes omitted; the full output is in log_path …]\n`;
}

const NEWLINE = 0x0a;

export class UnreadOutput {
  readonly headBytes: number;
  readonly tailBytes: number;
  /** What a reader sees of the omitted bytes, which the digest writes (pipe text for pipes). */
  private readonly middleText: TextRender;
  private head: Uint8Array | null = null;
  private headLength = 0;
  /** Bytes of the head a read shows once bytes are omitted: up to its last newline. */
  private headShown = 0;
  private tail: Uint8Array[] = [];
  private tailFirst = 0;
  private tailLength = 0;
  private middle: MiddleDigest | null = null;
  private unread = 0;
  private total = 0;

  constructor(headBytes: number, tailBytes: number, middleText: TextRender = AS_PRINTED) {
    this.headBytes = headBytes;
    this.tailBytes = tailBytes;
    this.middleText = middleText;
  }

  /** Bytes received since the job started. */
  get totalBytes(): number {
    return this.total;
  }

  /** Bytes received and not yet read. */
  get pendingBytes(): number {
    return this.unread;
  }

  /** `source` is where the bytes came from; every source shares one buffer, in arrival order. */
  feed(_source: SourceName, chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.total += chunk.length;
    this.append(chunk);
  }

  private append(chunk: Uint8Array): void {
    this.unread += chunk.length;
    let rest = chunk;
    if (this.headLength < this.headBytes) {
      this.head ??= new Uint8Array(this.headBytes);
      const n = Math.min(rest.length, this.headBytes - this.headLength);
      this.head.set(rest.subarray(0, n), this.headLength);
      this.headLength += n;
      rest = rest.subarray(n);
    }
    if (rest.length === 0) return;
    this.tail.push(rest);
    this.tailLength += rest.length;
    // Whole chunks that lie entirely before the last `tailBytes` leave for the digest; each chunk enters and leaves once.
    while (this.tailFirst < this.tail.length - 1 && this.tailLength - this.tail[this.tailFirst]!.length >= this.tailBytes) {
      const old = this.tail[this.tailFirst]!;
      this.tailLength -= old.length;
      this.tail[this.tailFirst] = EMPTY;
      this.tailFirst += 1;
      this.omit(old);
    }
    if (this.tailFirst > 64 && this.tailFirst * 2 > this.tail.length) {
      this.tail = this.tail.slice(this.tailFirst);
      this.tailFirst = 0;
    }
  }

  /** Bytes between head and tail, in order. The first omission cuts the head at its last newline. */
  private omit(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (this.middle === null) {
      this.middle = new MiddleDigest(this.middleText);
      const head = this.head ?? EMPTY;
      const newline = head.subarray(0, this.headLength).lastIndexOf(NEWLINE);
      // A head without a newline is one long line: it is cut on a character boundary instead.
      this.headShown = newline === -1 ? this.headLength - incompleteSuffix(head, this.headLength) : newline + 1;
      this.middle.feedBytes(head.subarray(this.headShown, this.headLength));
    }
    this.middle.feedBytes(bytes);
  }

  /**
   * Takes everything unread: the head and the tail as text, what lay between as a digest and counted as omitted.
   * Unless `final`, a character whose last bytes have not arrived yet is held back for the next read instead of
   * being decoded as garbage.
   */
  take(final: boolean): TakenText {
    let tailAll = concat(this.tail, this.tailFirst, this.tailLength);
    if (tailAll.length > this.tailBytes) {
      this.omit(tailAll.subarray(0, tailAll.length - this.tailBytes));
      tailAll = tailAll.subarray(tailAll.length - this.tailBytes);
    }
    const bytes = this.unread;
    const middle = this.middle;
    let front: Uint8Array<ArrayBufferLike> = this.head === null ? EMPTY : this.head.slice(0, middle === null ? this.headLength : this.headShown);
    let back: Uint8Array<ArrayBufferLike> = EMPTY;
    let digest: string[] | null = null;
    if (middle === null) {
      front = concat([front, tailAll], 0, front.length + tailAll.length);
    } else {
      // The tail starts after the end of the last omitted line; a tail without a newline starts at a character.
      const newline = tailAll.indexOf(NEWLINE);
      const start = newline === -1 ? leadingContinuations(tailAll) : newline + 1;
      this.omit(tailAll.subarray(0, start));
      digest = middle.finish();
      back = tailAll.subarray(start);
    }
    const omittedBytes = bytes - front.length - back.length;
    this.reset();
    let held = 0;
    if (!final) {
      const last = middle !== null ? back : front;
      held = incompleteSuffix(last);
      if (held > 0) {
        const carry = last.slice(last.length - held);
        if (last === back) back = back.subarray(0, back.length - held);
        else front = front.subarray(0, front.length - held);
        this.append(carry);
      }
    }
    const text = middle === null ? decode(front) : joinAround(decode(front), omissionMarker(omittedBytes), decode(back));
    return { text, bytes: bytes - held, omittedBytes, middle: digest };
  }

  private reset(): void {
    this.headLength = 0;
    this.headShown = 0;
    this.tail = [];
    this.tailFirst = 0;
    this.tailLength = 0;
    this.middle = null;
    this.unread = 0;
  }
}

/** Head, marker and tail, the marker on a line of its own (the head usually ends with a newline already). */
function joinAround(head: string, marker: string, tail: string): string {
  return (head.endsWith("\n") ? head + marker.slice(1) : head + marker) + tail;
}

const EMPTY = new Uint8Array(0);
const decoder = new TextDecoder("utf-8", { fatal: false });

function decode(bytes: Uint8Array): string {
  return bytes.length === 0 ? "" : decoder.decode(bytes);
}

function concat(chunks: readonly Uint8Array[], first: number, length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (let i = first; i < chunks.length; i += 1) {
    out.set(chunks[i]!, at);
    at += chunks[i]!.length;
  }
  return out;
}
