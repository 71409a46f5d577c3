/**
 * The job's output after its last newline (any source), as text, bounded: what prompt detection looks at. Pure.
 *
 * Only the end of the output matters, and a flood must not pay for decoding all of it. A newline byte is never part
 * of a longer UTF-8 character, so what follows a chunk's last newline decodes on its own; of a long run without one,
 * only the last `maxChars` characters' worth of bytes (at most four bytes each) can reach the result.
 */
import type { SourceName } from "../../mailbox/constants.ts";
import { leadingContinuations } from "../../shared/utf8.ts";

const LF = 0x0a;

export class UnterminatedLine {
  private readonly maxChars: number;
  private readonly maxBytes: number;
  /** One streaming decoder per source: a character split between two reads of a source is decoded whole. */
  private readonly decoders = new Map<SourceName, InstanceType<typeof TextDecoder>>();
  private tail = "";

  constructor(maxChars: number) {
    this.maxChars = maxChars;
    this.maxBytes = maxChars * 4;
  }

  /** The text after the last newline, at most `maxChars` UTF-16 code units (the newest ones). */
  get text(): string {
    return this.tail;
  }

  feed(source: SourceName, chunk: Uint8Array): void {
    let decoder = this.decoders.get(source);
    if (decoder === undefined) this.decoders.set(source, (decoder = new TextDecoder("utf-8")));
    let from = chunk.lastIndexOf(LF) + 1;
    if (chunk.length - from > this.maxBytes) {
      from = chunk.length - this.maxBytes;
      from += leadingContinuations(chunk.subarray(from));
    }
    if (from > 0) {
      // What the decoder held belongs before the cut: dropped with it.
      decoder.decode();
      this.tail = "";
    }
    this.tail += decoder.decode(chunk.subarray(from), { stream: true });
    if (this.tail.length > this.maxChars) this.tail = this.tail.slice(-this.maxChars);
  }
}
