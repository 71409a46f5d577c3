/**
 * The protocol between a job actor and the session's spawner (spawner/spawner.ts), the small process that starts a
 * pipe job's process so that the fork copies a small process instead of Pi's
 * (docs/decisions/spawner.md).
 *
 * An actor opens one connection per stream the child gets (stdout, stderr and, when piped, stdin) and one control
 * connection, all to the spawner's Unix socket. The first line on each names the spawn it belongs to (a random id)
 * and its role; the control line also carries the request. Once every stream of a request has arrived, the spawner
 * starts the process with those very sockets as its stdio, closes its own copies, and answers on the control
 * connection: `spawned` (or `error`), then `exit` when the process ends. The stream connections then carry the
 * child's bytes straight to the actor: the spawner never sees output.
 *
 * Lines are JSON, one per message; plain values only, so that neither side loads a schema library.
 */

/** What a stream connection is to the child. */
export type StreamRole = "stdin" | "stdout" | "stderr";

/** The first line of a stream connection. */
export interface StreamHello {
  spawn: string;
  role: StreamRole;
}

/** The first (and only) line an actor sends on its control connection. */
export interface SpawnRequest {
  spawn: string;
  role: "control";
  shell: string;
  command: string;
  cwd: string;
  /** The complete environment of the process. */
  env: Record<string, string>;
  /** Whether the child's stdin is a stream connection (otherwise it reads /dev/null). */
  stdin: boolean;
}

export type Hello = StreamHello | SpawnRequest;

/**
 * The spawner's answers on the control connection, in this order: one of the first two, then `exit`. `spawned`
 * carries when the fork was asked for, on the system's monotonic clock (`monotonicMs`): the answer can reach a starved
 * actor hundreds of milliseconds later, and a job's elapsed time and deadline count from its real start, never later.
 */
export type SpawnerReply =
  | { type: "spawned"; pid: number; at: number }
  | { type: "error"; message: string }
  | { type: "exit"; code: number | null; signal: string | null };

/** The longest line either side accepts: a request carries a whole environment, which stays well below this. */
export const MAX_LINE_BYTES = 4 * 1024 * 1024;

/** The line the spawner prints on its stdout once it listens, so its parent knows the socket is there. */
export const READY_LINE = "pi-jobs spawner ready";

/**
 * Splits a byte stream into lines, at most MAX_LINE_BYTES each; `push` returns the complete lines so far. A line
 * over the bound is an error of the peer: `push` throws, and the connection is to be closed.
 */
export class LineReader {
  private pending = "";
  /** Streaming: a character split between two reads is decoded whole. */
  private readonly decoder = new TextDecoder();

  push(chunk: Uint8Array): string[] {
    this.pending += this.decoder.decode(chunk, { stream: true });
    const lines = this.pending.split("\n");
    this.pending = lines.pop() ?? "";
    if (this.pending.length > MAX_LINE_BYTES) throw new RangeError(`a spawner protocol line is longer than ${MAX_LINE_BYTES} bytes`);
    return lines;
  }
}

/** One message as a line. */
export function line(message: Hello | SpawnerReply): string {
  return `${JSON.stringify(message)}\n`;
}

/** A line's JSON object, or null when the line is not one. */
function jsonObject(text: string): Record<string, unknown> | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : null;
}

/** Reads a hello line; null when it is not one (the peer is not speaking this protocol). */
export function parseHello(text: string): Hello | null {
  const hello = jsonObject(text);
  if (hello === null) return null;
  if (typeof hello.spawn !== "string" || hello.spawn.length === 0) return null;
  if (hello.role === "stdin" || hello.role === "stdout" || hello.role === "stderr") return { spawn: hello.spawn, role: hello.role };
  if (hello.role !== "control") return null;
  const { shell, command, cwd, env, stdin } = hello;
  if (typeof shell !== "string" || typeof command !== "string" || typeof cwd !== "string" || typeof stdin !== "boolean") return null;
  if (typeof env !== "object" || env === null || Object.values(env).some((item) => typeof item !== "string")) return null;
  return { spawn: hello.spawn, role: "control", shell, command, cwd, env: env as Record<string, string>, stdin };
}

/** Reads a reply line; null when it is not one. */
export function parseReply(text: string): SpawnerReply | null {
  const reply = jsonObject(text);
  if (reply === null) return null;
  switch (reply.type) {
    case "spawned":
      return Number.isSafeInteger(reply.pid) && (reply.pid as number) > 1 && Number.isFinite(reply.at)
        ? { type: "spawned", pid: reply.pid as number, at: reply.at as number }
        : null;
    case "error":
      return typeof reply.message === "string" ? { type: "error", message: reply.message } : null;
    case "exit": {
      const code = reply.code === null || Number.isInteger(reply.code) ? (reply.code as number | null) : undefined;
      const signal = reply.signal === null || typeof reply.signal === "string" ? (reply.signal as string | null) : undefined;
      return code === undefined || signal === undefined ? null : { type: "exit", code, signal };
    }
    default:
      return null;
  }
}

/**
 * Milliseconds on the system's monotonic clock (CLOCK_MONOTONIC on Linux), the same in every process, unlike
 * `performance.now()`, whose origin is each thread's own start.
 */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** A `monotonicMs()` reading of another process, as a `performance.now()` time of this thread (never in its future). */
export function onThisClock(at: number): number {
  const now = performance.now();
  return now - Math.max(0, monotonicMs() - at);
}
