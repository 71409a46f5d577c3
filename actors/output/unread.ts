/**
 * A shell job's unread output, kept in its actor: the first `headBytes` and the last `tailBytes` since the previous
 * read, plus a count of what fell between. Feeding a chunk is constant work (a reference to its bytes, plus at most
 * one copy into the head); decoding happens only when a tool reads, and only the bounded result crosses to the host.
 *
 * `feed(source, bytes)` / `take(maxBytes, final)` is the whole interface, so a text transform per source (terminal
 * emulation for a PTY, escape stripping for pipes) can be put between the process and this buffer later.
 */
import type { SourceName } from "../../mailbox/constants.ts";
import { incompleteSuffix, leadingContinuations } from "../../shared/utf8.ts";

export interface TakenOutput {
  /** Decoded text (raw: control characters are escaped later, where the text meets the model). */
  text: string;
  /** Bytes this read covered, including the omitted ones. */
  bytes: number;
  /** Bytes dropped between head and tail. */
  omittedBytes: number;
}

export function omissionMarker(omittedBytes: number): string {
  return `\n[… ${omittedBytes} bytes omitted; the full output is in log_path …]\n`;
}

/** `take`'s bound when the reader keeps whatever the buffer holds. */
export const ALL_UNREAD = Number.POSITIVE_INFINITY;

export class UnreadOutput {
  readonly headBytes: number;
  readonly tailBytes: number;
  private head: Uint8Array | null = null;
  private headLength = 0;
  private tail: Uint8Array[] = [];
  private tailFirst = 0;
  private tailLength = 0;
  private unread = 0;
  private total = 0;

  constructor(headBytes: number, tailBytes: number) {
    this.headBytes = headBytes;
    this.tailBytes = tailBytes;
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
    // Drop whole chunks that lie entirely before the last `tailBytes`; each chunk enters and leaves once.
    while (this.tailFirst < this.tail.length - 1 && this.tailLength - this.tail[this.tailFirst]!.length >= this.tailBytes) {
      this.tailLength -= this.tail[this.tailFirst]!.length;
      this.tail[this.tailFirst] = EMPTY;
      this.tailFirst += 1;
    }
    if (this.tailFirst > 64 && this.tailFirst * 2 > this.tail.length) {
      this.tail = this.tail.slice(this.tailFirst);
      this.tailFirst = 0;
    }
  }

  /**
   * Takes everything unread: at most `maxBytes` of it as text (half head, half tail, within what the buffer keeps),
   * the rest counted as omitted. Unless `final`, a character whose last bytes have not arrived yet is held back for
   * the next read instead of being decoded as garbage.
   */
  take(maxBytes: number, final: boolean): TakenOutput {
    const headKeep = Math.min(this.headBytes, Math.ceil(Math.max(0, maxBytes) / 2));
    const tailKeep = Math.min(this.tailBytes, Math.max(0, maxBytes - headKeep));
    const headPart = this.head === null ? EMPTY : this.head.slice(0, Math.min(this.headLength, headKeep));
    const tailAll = concat(this.tail, this.tailFirst, this.tailLength);
    const tailPart = tailAll.length > tailKeep ? tailAll.subarray(tailAll.length - tailKeep) : tailAll;
    const bytes = this.unread;
    const gap = bytes - headPart.length - tailPart.length;
    this.reset();

    let front: Uint8Array;
    let back: Uint8Array;
    let omittedBytes = 0;
    if (gap === 0) {
      front = concat([headPart, tailPart], 0, headPart.length + tailPart.length);
      back = EMPTY;
    } else {
      // Cut both sides on character boundaries; the bytes of a split character count as omitted.
      const headCut = incompleteSuffix(headPart);
      const tailCut = leadingContinuations(tailPart);
      omittedBytes = gap + headCut + tailCut;
      front = headPart.subarray(0, headPart.length - headCut);
      back = tailPart.subarray(tailCut);
    }
    let held = 0;
    if (!final) {
      const last = back.length > 0 || gap !== 0 ? back : front;
      held = incompleteSuffix(last);
      if (held > 0) {
        const carry = last.slice(last.length - held);
        if (last === back) back = back.subarray(0, back.length - held);
        else front = front.subarray(0, front.length - held);
        this.append(carry);
      }
    }
    const text = gap === 0 ? decode(front) : decode(front) + omissionMarker(omittedBytes) + decode(back);
    return { text, bytes: bytes - held, omittedBytes };
  }

  private reset(): void {
    this.headLength = 0;
    this.tail = [];
    this.tailFirst = 0;
    this.tailLength = 0;
    this.unread = 0;
  }
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
