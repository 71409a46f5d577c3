/**
 * Output batching with credit-based backpressure, on the actor's side of the data port.
 *
 * The actor adds raw chunks as the process writes them. A batch goes out when it reaches `maxBatchBytes`, or
 * `lingerMs` after its first byte (so an interactive prompt is not held back), and only while the host has
 * granted credit. Without credit the chunks wait here; past `highWaterBytes` the actor is told to pause the
 * process's pipes, and below `lowWaterBytes` to resume them. Nothing is ever dropped: backpressure slows the
 * writer instead.
 */
import { SOURCE_ID } from "./constants.ts";

export interface BatchOut {
  payload: Uint8Array;
  spans: Uint32Array;
  bytes: number;
  lines: number;
}

export interface OutboxOptions {
  initialCredit: number;
  send(batch: BatchOut): void;
  onPressure(paused: boolean): void;
  maxBatchBytes?: number;
  lingerMs?: number;
  highWaterBytes?: number;
  lowWaterBytes?: number;
}

export interface Outbox {
  add(source: keyof typeof SOURCE_ID, chunk: Uint8Array, lines: number): void;
  grant(batches: number): void;
  /** Sends everything still queued, credit or not: the job is ending and the exit message must follow it. */
  drain(): void;
  queuedBytes(): number;
  paused(): boolean;
  close(): void;
}

export function createOutbox(options: OutboxOptions): Outbox {
  const maxBatchBytes = options.maxBatchBytes ?? 64 * 1024;
  const lingerMs = options.lingerMs ?? 8;
  const highWater = options.highWaterBytes ?? 1024 * 1024;
  const lowWater = options.lowWaterBytes ?? 256 * 1024;
  let credit = options.initialCredit;
  let chunks: { source: number; bytes: Uint8Array }[] = [];
  let chunkBytes = 0;
  let chunkLines = 0;
  /** Finished batches that are waiting for credit. */
  const ready: BatchOut[] = [];
  let readyBytes = 0;
  let linger: ReturnType<typeof setTimeout> | null = null;
  let isPaused = false;
  let closed = false;

  function seal(): void {
    if (chunks.length === 0) return;
    const payload = new Uint8Array(chunkBytes);
    const spans = new Uint32Array(chunks.length * 2);
    let offset = 0;
    chunks.forEach((chunk, index) => {
      payload.set(chunk.bytes, offset);
      offset += chunk.bytes.length;
      spans[index * 2] = chunk.source;
      spans[index * 2 + 1] = chunk.bytes.length;
    });
    ready.push({ payload, spans, bytes: chunkBytes, lines: chunkLines });
    readyBytes += chunkBytes;
    chunks = [];
    chunkBytes = 0;
    chunkLines = 0;
  }

  function pump(): void {
    while (credit > 0 && ready.length > 0) {
      const batch = ready.shift()!;
      readyBytes -= batch.bytes;
      credit -= 1;
      options.send(batch);
    }
    updatePressure();
  }

  function updatePressure(): void {
    const queued = readyBytes + chunkBytes;
    if (!isPaused && queued >= highWater) {
      isPaused = true;
      options.onPressure(true);
    } else if (isPaused && queued <= lowWater) {
      isPaused = false;
      options.onPressure(false);
    }
  }

  function onLinger(): void {
    linger = null;
    seal();
    pump();
  }

  return {
    add(source, chunk, lines) {
      if (closed || chunk.length === 0) return;
      chunks.push({ source: SOURCE_ID[source], bytes: chunk });
      chunkBytes += chunk.length;
      chunkLines += lines;
      if (chunkBytes >= maxBatchBytes) {
        if (linger) clearTimeout(linger);
        linger = null;
        seal();
        pump();
      } else if (!linger) {
        linger = setTimeout(onLinger, lingerMs);
      } else {
        updatePressure();
      }
    },
    grant(batches) {
      credit += batches;
      pump();
    },
    drain() {
      if (linger) clearTimeout(linger);
      linger = null;
      seal();
      credit = Math.max(credit, ready.length);
      pump();
    },
    queuedBytes: () => readyBytes + chunkBytes,
    paused: () => isPaused,
    close() {
      if (linger) clearTimeout(linger);
      linger = null;
      closed = true;
    },
  };
}
