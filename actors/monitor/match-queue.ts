/**
 * The lines of a monitor that wait for the regex sandbox, in output order, pure: no thread, no timer. The sandbox
 * matching (sandbox-matching.ts) takes one batch from the front at a time and settles it when the sandbox answers;
 * the queue keeps the counts its watermarks and its hard bound are measured on.
 */
import type { LineSource } from "../../mailbox/monitor.ts";
import { createFifo } from "../output/fifo.ts";

/** A line to match: a complete one, or the unterminated line of an idle source (a probe). */
export interface QueuedLine {
  kind: "line" | "probe";
  source: LineSource;
  text: string;
  bytes: number;
}

/** An over-long line: queued like a line, so that every line before it is decided first. */
export interface LimitMarker {
  kind: "limit";
  source: LineSource;
}

export type QueueItem = QueuedLine | LimitMarker;

export interface QueueLimits {
  /** Soft watermark: take no more output, pause both pipes. */
  pauseLines: number;
  pauseBytes: number;
  /** Resume once matching has caught up to half the watermark, so the pipes do not flap. */
  resumeLines: number;
  resumeBytes: number;
  /** Hard bound: over it the contract fails with matcher_queue_limit. */
  maxLines: number;
  maxBytes: number;
}

export const QUEUE_LIMITS: QueueLimits = {
  pauseLines: 1024,
  pauseBytes: 256 * 1024,
  resumeLines: 512,
  resumeBytes: 128 * 1024,
  maxLines: 16_384,
  maxBytes: 4 * 1024 * 1024,
};

export interface MatchQueue {
  /** Items waiting or in flight (a limit marker counts as a line of no bytes). */
  readonly lines: number;
  /** Their bytes. */
  readonly bytes: number;
  /** A batch is with the sandbox. */
  readonly inFlight: boolean;
  /** Nothing waits and nothing is in flight. */
  readonly empty: boolean;
  /**
   * Adds an item at the back. A line identical to the last one waiting (same source, same text) would get the
   * identical verdict, and the contract acts only on the first of them: it is not added.
   */
  add(item: QueueItem): void;
  /** At or over the soft watermark. */
  full(): boolean;
  /** Down to the resume level. */
  caughtUp(): boolean;
  /** Over the hard bound, counting `unframedBytes` of output that has not even been framed yet. */
  overBound(unframedBytes: number): boolean;
  /** Removes the limit marker that comes next, if one does, and returns its source; null otherwise or while a batch is out. */
  takeLimit(): LineSource | null;
  /** The next lines (at most `maxLines`, none past a limit marker), now in flight; empty while a batch is out. */
  takeBatch(maxLines: number): QueuedLine[];
  /** The batch in flight came back. */
  settle(): void;
  /** The contract decided: what waits goes; the batch in flight stays counted until it settles. */
  discard(): void;
}

export function createMatchQueue(limits: QueueLimits): MatchQueue {
  // Pending items in output order; the first `inFlight` of them are with the sandbox.
  const items = createFifo<QueueItem>();
  let inFlight = 0;
  let lines = 0;
  let bytes = 0;

  const bytesOf = (item: QueueItem): number => (item.kind === "limit" ? 0 : item.bytes);

  return {
    get lines() {
      return lines;
    },
    get bytes() {
      return bytes;
    },
    get inFlight() {
      return inFlight > 0;
    },
    get empty() {
      return items.length === 0;
    },

    add(item) {
      const last = items.length > inFlight ? items.at(items.length - 1) : undefined;
      if (item.kind === "line" && last?.kind === "line" && last.source === item.source && last.text === item.text) return;
      items.push(item);
      lines++;
      bytes += bytesOf(item);
    },

    full: () => lines >= limits.pauseLines || bytes >= limits.pauseBytes,
    caughtUp: () => lines <= limits.resumeLines && bytes <= limits.resumeBytes,
    overBound: (unframedBytes) => lines > limits.maxLines || bytes + unframedBytes > limits.maxBytes,

    takeLimit() {
      const first = inFlight === 0 ? items.at(0) : undefined;
      if (first?.kind !== "limit") return null;
      items.shift(1);
      lines--;
      return first.source;
    },

    takeBatch(maxLines) {
      const batch: QueuedLine[] = [];
      if (inFlight > 0) return batch;
      for (let at = 0; at < items.length && batch.length < maxLines; at++) {
        const item = items.at(at) as QueueItem;
        if (item.kind === "limit") break;
        batch.push(item);
      }
      inFlight = batch.length;
      return batch;
    },

    settle() {
      for (let at = 0; at < inFlight; at++) bytes -= bytesOf(items.at(at) as QueueItem);
      items.shift(inFlight);
      lines -= inFlight;
      inFlight = 0;
    },

    discard() {
      items.keep(inFlight);
      lines = inFlight;
      bytes = 0;
      for (let at = 0; at < inFlight; at++) bytes += bytesOf(items.at(at) as QueueItem);
    },
  };
}
