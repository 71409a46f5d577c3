/**
 * A job's retained output window, kept in its actor: the last few hundred KiB as the chunks arrived, for the console
 * and `/jobs`. Taking a chunk in is one copy into a reused buffer (actors/output/byte-ring.ts) and a record, maybe the
 * eviction of whole old chunks; decoding into lines happens only when someone reads, at human rate, and only the
 * decoded window crosses to the host. Whatever leaves the window is counted, never silent.
 */
import { ByteRing } from "./byte-ring.ts";
import { createFifo } from "./fifo.ts";
import { createFramer } from "./framing.ts";
import type { RetainedWindow, RetainedLine } from "../../mailbox/output.ts";
import type { SourceName } from "../../mailbox/constants.ts";

const SOURCE_NAMES = ["stdout", "stderr", "pty"] as const;
/** The console shows at most this much of one line; the rest of the line is counted as clipped. */
const DISPLAY_LINE_BYTES = 10 * 1024;

export interface OutputWindow {
  feed(source: SourceName, bytes: Uint8Array, lines: number): void;
  read(): RetainedWindow;
}

interface Chunk {
  source: SourceName;
  /** Absolute position of its first byte in the ring. */
  at: number;
  bytes: number;
  lines: number;
}

export function createOutputWindow(options: { maxBytes: number; maxLines: number }): OutputWindow {
  const ring = new ByteRing();
  const chunks = createFifo<Chunk>();
  let bytes = 0;
  let lines = 0;
  let evictedBytes = 0;
  let evictedLines = 0;

  return {
    feed(source, payload, lineCount) {
      if (payload.length === 0) return;
      const batch: Chunk = { source, at: ring.append(payload), bytes: payload.length, lines: lineCount };
      chunks.push(batch);
      bytes += batch.bytes;
      lines += batch.lines;
      // Keep up to twice the window so that an exact trim at read time still has a full window to show.
      while (chunks.length > 1) {
        const old = chunks.at(0)!;
        if (bytes - old.bytes < options.maxBytes * 2 && lines - old.lines < options.maxLines * 2) break;
        chunks.shift(1);
        ring.dropBefore(chunks.at(0)!.at);
        bytes -= old.bytes;
        lines -= old.lines;
        evictedBytes += old.bytes;
        evictedLines += old.lines;
      }
    },
    read() {
      const visit = (push: (source: SourceName, piece: Uint8Array) => void): void => {
        for (let index = 0; index < chunks.length; index += 1) {
          const chunk = chunks.at(index)!;
          ring.read(chunk.at, chunk.at + chunk.bytes, (piece) => push(chunk.source, piece));
        }
      };
      return decodeWindow(visit, { bytes: evictedBytes, lines: evictedLines }, options);
    },
  };
}

/**
 * What a reader sees of the chunks a window still holds: `visit` hands over their bytes in order, `evicted` is what
 * already left. A line that began in an evicted chunk is shown only from its next whole line. Pure apart from `visit`.
 */
export function decodeWindow(
  visit: (push: (source: SourceName, piece: Uint8Array) => void) => void,
  evicted: { bytes: number; lines: number },
  bounds: { maxBytes: number; maxLines: number },
): RetainedWindow {
  const framer = createFramer<SourceName>({ maxRecordBytes: DISPLAY_LINE_BYTES });
  const decoded: RetainedLine[] = [];
  const skipFirst = new Set<SourceName>(evicted.bytes > 0 ? SOURCE_NAMES : []);
  let fragmentBytes = 0;
  let fragmentLines = 0;
  const take = (records: ReturnType<typeof framer.push>) => {
    for (const record of records) {
      if (skipFirst.delete(record.source)) {
        // This line began in a batch that was evicted: show only whole lines.
        fragmentBytes += record.bytes + 1;
        fragmentLines += 1;
        continue;
      }
      decoded.push({ source: record.source, text: record.text });
    }
  };
  visit((source, piece) => take(framer.push(source, piece)));
  for (const source of SOURCE_NAMES) take(framer.end(source));
  const window = newestThatFit(decoded, bounds);
  return {
    ...window,
    droppedLines: window.droppedLines + evicted.lines + fragmentLines,
    droppedBytes: window.droppedBytes + evicted.bytes + fragmentBytes,
  };
}

/**
 * The newest lines that fit both bounds (each line counts its bytes and a newline), and what that left out. Pure: the
 * window's rule for what a reader sees, whatever keeps the bytes.
 */
export function newestThatFit(lines: RetainedLine[], bounds: { maxBytes: number; maxLines: number }): RetainedWindow {
  let start = Math.max(0, lines.length - bounds.maxLines);
  let kept = 0;
  for (let index = lines.length - 1; index >= start; index -= 1) {
    const size = Buffer.byteLength(lines[index]!.text) + 1;
    if (kept + size > bounds.maxBytes) {
      start = index + 1;
      break;
    }
    kept += size;
  }
  let droppedBytes = 0;
  for (let index = 0; index < start; index += 1) droppedBytes += Buffer.byteLength(lines[index]!.text) + 1;
  return { lines: lines.slice(start), droppedLines: start, droppedBytes };
}
