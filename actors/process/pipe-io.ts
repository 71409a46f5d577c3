/**
 * A process wired through pipes, as the job actor sees it (`ProcessIo`): the same whether this thread spawned the
 * process or the session's spawner did (actors/process/spawner-client.ts). Only where the exit comes from differs.
 */
import type { Readable, Writable } from "node:stream";
import type { ProcessIo } from "./io.ts";

export interface PipeStreams {
  pid: number;
  /** When the process was forked, as `performance.now()` of this thread. */
  spawnedAt: number;
  stdout: Readable;
  stderr: Readable;
  stdin: Writable | null;
  /** Calls back once with the process's exit. */
  onExit(listener: (exitCode: number | null, signal: string | null) => void): void;
}

export function pipeIo(streams: PipeStreams): ProcessIo {
  const { stdout, stderr, stdin } = streams;
  let openStreams = 2;
  const drained: (() => void)[] = [];
  const onStreamEnd = () => {
    openStreams -= 1;
    if (openStreams === 0) for (const listener of drained) listener();
  };
  for (const stream of [stdout, stderr]) {
    // A spawner's connection can end before the job is wired here: an empty one closes as soon as its end arrives,
    // with nobody reading (a quick command that wrote nothing on stderr). Missed, its close would hold the job's end
    // until the streams had been quiet for a second.
    if (stream.closed) onStreamEnd();
    else stream.once("close", onStreamEnd);
  }
  // A stream error (a reset connection) ends that stream; its 'close' follows.
  stdout.on("error", () => {});
  stderr.on("error", () => {});
  // EPIPE when the process exits before reading its input is expected, not a crash.
  stdin?.on("error", () => {});
  return {
    pid: streams.pid,
    spawnedAt: streams.spawnedAt,
    kind: "pipes",
    onData(listener) {
      stdout.on("data", (chunk: Buffer) => listener("stdout", chunk));
      stderr.on("data", (chunk: Buffer) => listener("stderr", chunk));
    },
    onDrained(listener) {
      if (openStreams === 0) listener();
      else drained.push(listener);
    },
    onExit: (listener) => streams.onExit(listener),
    pause() {
      stdout.pause();
      stderr.pause();
    },
    resume() {
      stdout.resume();
      stderr.resume();
    },
    write(bytes) {
      if (!stdin || stdin.destroyed || stdin.writableEnded) return 0;
      stdin.write(bytes);
      return stdin.writableLength;
    },
    pendingWriteBytes: () => stdin?.writableLength ?? 0,
    endStdin() {
      if (!stdin || stdin.writableEnded) return false;
      stdin.end();
      return true;
    },
    resize: () => false,
    abandonStreams() {
      stdout.destroy();
      stderr.destroy();
      stdin?.destroy();
    },
  };
}
