/**
 * The one seam between a shell job's bytes and the output text the model reads. A job gets one `OutputText` for its
 * life: every output batch is fed to it in arrival order, and each tool read takes what is new since the previous
 * read. A PTY's bytes are rendered by a terminal emulator (`output_rendered: "terminal"`); pipe output keeps today's
 * bounded head and tail with colours and OSC strings removed and carriage returns applied (`"text"`). The log file
 * receives the raw bytes either way, unchanged.
 *
 * The rendering modules live in `actors/` and import nothing from Pi, so this seam can move into the job actor (which
 * owns the bytes) without change to what it returns.
 */
import { pipeText } from "../../actors/pipe-text.ts";
import { TerminalText } from "../../actors/terminal-text.ts";
import { OUTPUT_HEAD_BYTES, OUTPUT_TAIL_BYTES } from "./limits.ts";
import { OutputAccumulator, type TakenOutput } from "./output-buffer.ts";

export type OutputRendering = "terminal" | "text";

export interface OutputText {
  readonly rendering: OutputRendering;
  /** Raw bytes received since the job started. */
  readonly totalBytes: number;
  /** Raw bytes received and not yet read. */
  readonly pendingBytes: number;
  /** One span of an output batch: `source` is the batch's source id (stdout, stderr; a PTY has one). */
  feed(source: number, bytes: Uint8Array): void;
  /** The PTY was resized (pipes ignore it). */
  resize(cols: number, rows: number): void;
  /**
   * Everything new since the previous read, bounded. `bytes` counts the raw bytes the read covers; `omittedBytes`
   * counts what was left out between head and tail (raw bytes for text, rendered bytes for a terminal). Unless
   * `final`, a character whose last bytes have not arrived yet waits for the next read.
   */
  take(final: boolean): TakenOutput;
}

/** Feeds one output batch (`spans` is [sourceId, length, …] over `payload`). */
export function feedBatch(output: OutputText, payload: Uint8Array, spans: ArrayLike<number>): void {
  let at = 0;
  for (let i = 0; i + 1 < spans.length; i += 2) {
    const length = spans[i + 1]!;
    output.feed(spans[i]!, payload.subarray(at, at + length));
    at += length;
  }
  if (at < payload.length) output.feed(0, payload.subarray(at));
}

export function createOutputText(pty: { cols: number; rows: number } | null): OutputText {
  return pty === null ? new PipeOutput() : new TerminalOutput(pty.cols, pty.rows);
}

class PipeOutput implements OutputText {
  readonly rendering = "text" as const;
  private readonly accumulator = new OutputAccumulator(OUTPUT_HEAD_BYTES, OUTPUT_TAIL_BYTES);

  get totalBytes(): number {
    return this.accumulator.totalBytes;
  }

  get pendingBytes(): number {
    return this.accumulator.pendingBytes;
  }

  // Sources interleave in arrival order, as they reach the log.
  feed(_source: number, bytes: Uint8Array): void {
    this.accumulator.push(bytes);
  }

  resize(): void {}

  take(final: boolean): TakenOutput {
    const taken = this.accumulator.take(final);
    return { ...taken, text: pipeText(taken.text) };
  }
}

class TerminalOutput implements OutputText {
  readonly rendering = "terminal" as const;
  private readonly terminal: TerminalText;
  private total = 0;

  constructor(cols: number, rows: number) {
    this.terminal = new TerminalText({ cols, rows, headBytes: OUTPUT_HEAD_BYTES, tailBytes: OUTPUT_TAIL_BYTES });
  }

  get totalBytes(): number {
    return this.total;
  }

  get pendingBytes(): number {
    return this.terminal.unreadBytes;
  }

  feed(_source: number, bytes: Uint8Array): void {
    this.total += bytes.length;
    this.terminal.feed(bytes);
  }

  resize(cols: number, rows: number): void {
    this.terminal.resize(cols, rows);
  }

  // The emulator keeps an unfinished character until its last bytes arrive, so there is nothing to hold back here.
  take(): TakenOutput {
    const bytes = this.terminal.unreadBytes;
    const read = this.terminal.take();
    return { text: read.text, bytes, omittedBytes: read.omittedBytes };
  }
}
