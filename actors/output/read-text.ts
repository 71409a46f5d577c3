/**
 * What a shell job's reads return: the unread output since the previous read, as text a person watching the job
 * would see. A PTY's bytes go through a headless terminal emulator (progress bars collapse, cursor movement and line
 * clears apply, colours go); pipe output keeps the bounded head and tail of `UnreadOutput` with colour codes and OSC
 * strings removed and carriage returns applied. Either way what falls between head and tail is digested, not
 * dropped (actors/output/middle-digest.ts). The log file receives the raw bytes.
 *
 * It lives in the job's actor, which owns the bytes: only the bounded text of a read crosses to Pi's thread.
 */
import type { JobIo } from "../../mailbox/spec.ts";
import type { SourceName } from "../../mailbox/constants.ts";
import { PIPE_TEXT, pipeText } from "./pipe-text.ts";
import { UnreadOutput, type TakenText } from "./unread.ts";


export interface OutputText {
  /** Raw bytes received since the job started. */
  readonly totalBytes: number;
  /** Raw bytes received and not yet read. */
  readonly pendingBytes: number;
  feed(source: SourceName, bytes: Uint8Array): void;
  /** The terminal was resized (pipes ignore it). */
  resize(cols: number, rows: number): void;
  /**
   * Everything new since the previous read, within the head and tail it was built with. `bytes` counts the raw bytes
   * the read covers; `omittedBytes` what was left out (raw bytes for pipes, rendered bytes for a terminal), and
   * `middle` digests it. Unless `final`, a character whose last bytes have not arrived yet waits for the next read.
   */
  take(final: boolean): TakenText;
}

export interface OutputBounds {
  headBytes: number;
  tailBytes: number;
}

/** The emulator (and its 3–6 MiB per thread) is loaded only by actors that own a terminal. */
export async function createOutputText(io: JobIo, bounds: OutputBounds): Promise<OutputText> {
  if (io.kind === "pipes") return new PipeOutput(bounds);
  const { TerminalText } = await import("./terminal-text.ts");
  return new TerminalOutput(new TerminalText({ cols: io.cols, rows: io.rows, ...bounds }));
}

class PipeOutput implements OutputText {
  private readonly unread: UnreadOutput;

  constructor(bounds: OutputBounds) {
    this.unread = new UnreadOutput(bounds.headBytes, bounds.tailBytes, PIPE_TEXT);
  }

  get totalBytes(): number {
    return this.unread.totalBytes;
  }

  get pendingBytes(): number {
    return this.unread.pendingBytes;
  }

  // Sources interleave in arrival order, as they reach the log.
  feed(source: SourceName, bytes: Uint8Array): void {
    this.unread.feed(source, bytes);
  }

  resize(): void {}

  take(final: boolean): TakenText {
    const taken = this.unread.take(final);
    return { ...taken, text: pipeText(taken.text) };
  }
}

type Terminal = InstanceType<typeof import("./terminal-text.ts").TerminalText>;

class TerminalOutput implements OutputText {
  private readonly terminal: Terminal;
  private total = 0;

  constructor(terminal: Terminal) {
    this.terminal = terminal;
  }

  get totalBytes(): number {
    return this.total;
  }

  get pendingBytes(): number {
    return this.terminal.unreadBytes;
  }

  feed(_source: SourceName, bytes: Uint8Array): void {
    this.total += bytes.length;
    this.terminal.feed(bytes);
  }

  resize(cols: number, rows: number): void {
    this.terminal.resize(cols, rows);
  }

  // The emulator keeps an unfinished character until its last bytes arrive, so there is nothing to hold back here.
  take(): TakenText {
    const bytes = this.terminal.unreadBytes;
    const read = this.terminal.take();
    return { text: read.text, bytes, omittedBytes: read.omittedBytes, middle: read.middle };
  }
}
