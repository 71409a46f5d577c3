/**
 * Raw output not framed yet, in arrival order, pure: the sandbox matching (sandbox-matching.ts) keeps chunks here as
 * bytes while the lines waiting for the sandbox are over their watermark, and frames them a slice at a time as the
 * sandbox catches up. A source's EOF waits here too, so it is framed after the bytes that came before it.
 */
import type { LineSource } from "../../mailbox/monitor.ts";
import { createFifo } from "../output/fifo.ts";

/** Output of one source: bytes, or its EOF (`bytes` null). */
export interface BacklogPiece {
  source: LineSource;
  bytes: Uint8Array | null;
}

export interface OutputBacklog {
  readonly empty: boolean;
  /** Bytes waiting. */
  readonly bytes: number;
  /** Appends a chunk, or a source's EOF (null). */
  push(source: LineSource, bytes: Uint8Array | null): void;
  /** The oldest piece, at most `maxBytes` of a chunk (the rest stays first in line); undefined when empty. */
  take(maxBytes: number): BacklogPiece | undefined;
}

export function createOutputBacklog(): OutputBacklog {
  const pieces = createFifo<BacklogPiece>();
  /** How much of the first piece was already taken. */
  let offset = 0;
  let bytes = 0;

  return {
    get empty() {
      return pieces.length === 0;
    },
    get bytes() {
      return bytes;
    },

    push(source, chunk) {
      pieces.push({ source, bytes: chunk });
      bytes += chunk?.length ?? 0;
    },

    take(maxBytes) {
      const piece = pieces.at(0);
      if (piece === undefined) return undefined;
      if (piece.bytes === null) {
        pieces.shift(1);
        return piece;
      }
      const end = Math.min(piece.bytes.length, offset + maxBytes);
      const slice = piece.bytes.subarray(offset, end);
      if (end === piece.bytes.length) {
        pieces.shift(1);
        offset = 0;
      } else {
        offset = end;
      }
      bytes -= slice.length;
      return { source: piece.source, bytes: slice };
    },
  };
}
