/**
 * What the job actor holds of a started process, piped or on a terminal alike: its output, its exit, its input and
 * the few controls a job has. pipe-io.ts, the spawner client and process-io.ts (the PTY) each make one.
 */
import type { SourceName } from "../../mailbox/constants.ts";

export interface ProcessIo {
  readonly pid: number;
  /**
   * When the process was forked, as `performance.now()` on this thread: its elapsed time and its deadline count from
   * here. A process the spawner forked may have been running for a while before this thread heard of it.
   */
  readonly spawnedAt: number;
  readonly kind: "pipes" | "pty";
  /** Raw bytes in arrival order. */
  onData(listener: (source: SourceName, chunk: Uint8Array) => void): void;
  /** Every output stream has ended (EOF on both pipes, or the terminal closed). */
  onDrained(listener: () => void): void;
  /** The direct child exited; output may still be arriving. */
  onExit(listener: (exitCode: number | null, signal: string | null) => void): void;
  pause(): void;
  resume(): void;
  /** Queues bytes for the process; returns the bytes still waiting to be taken. */
  write(bytes: Uint8Array): number;
  pendingWriteBytes(): number;
  /** Closes stdin; false when there is no stdin to close (PTY, or stdin not piped). */
  endStdin(): boolean;
  resize(cols: number, rows: number): boolean;
  /** Stops reading: used once the group is gone but a descendant that escaped it still holds a stream open. */
  abandonStreams(): void;
}
