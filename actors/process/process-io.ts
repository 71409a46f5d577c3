/**
 * Starting a command in its own process group, wired through pipes or a pseudo-terminal, behind one small
 * interface so the job actor does not care which. Spawn problems become one clear message (missing working
 * directory, missing shell) instead of an ENOENT that names the wrong file.
 */
import type { ChildProcess } from "node:child_process";
import { accessSync, constants, readSync, statSync } from "node:fs";
import { constants as osConstants } from "node:os";
import { delimiter, isAbsolute, join } from "node:path";
import type { JobIo } from "../../mailbox/spec.ts";
import type { SourceName } from "../../mailbox/constants.ts";
import { TAG_VARIABLE } from "../../shared/process-table/index.ts";
import type { ProcessIo } from "./io.ts";
import { pipeIo } from "./pipe-io.ts";
import { spawnThroughSpawner } from "./spawner-client.ts";
import { threadEnv } from "../thread/env.ts";
import { groupAlive } from "../../shared/process-group.ts";

export class SpawnError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SpawnError";
  }
}

/**
 * What the actor starts a process from: the command, its shell, directory, environment, wiring and tag (a job's spec
 * has them all). Not the spawner's wire request (mailbox/spawner-protocol.ts), which a pipe job's launch becomes there.
 */
export interface ProcessLaunch {
  command: string;
  shell: string;
  cwd: string;
  env: Record<string, string> | null;
  io: JobIo;
  /** The job's tag, set as PI_JOBS_JOB for the process and everything it starts (shared/process-table/tags.ts). */
  tag: string;
  /** The session spawner's socket (spawner/spawner.ts): a pipe job's process is started there when it answers. */
  spawner?: string | undefined;
}

/**
 * The process's environment: the requested one (or the host's), tagged with the job, and with the shell nesting level
 * of a command typed at a shell. A pipe job's stdin is a socket (Node's pipes are), and bash runs the user's ~/.bashrc
 * for a `-c` command whose stdin is a socket whenever it believes it is the outermost shell — SHLVL unset or 0, as when
 * Pi was started by `exec pi`, straight by tmux, or by a launcher that is not a shell. Every job then ran the user's
 * interactive setup first, and a job stopped in the middle of it could leave that setup's lock behind (pyenv's, which
 * made every later bash job wait 60 s for it). So a missing or zero SHLVL becomes 1; a real one is kept.
 */
function jobEnv(request: ProcessLaunch): Record<string, string> {
  const base = request.env ?? threadEnv;
  const env: Record<string, string> = { ...base, [TAG_VARIABLE]: request.tag };
  if (!(Number(base.SHLVL) >= 1)) env.SHLVL = "1";
  return env;
}

/** Checks what would otherwise fail inside the child with a misleading error. */
export function checkSpawnable(request: ProcessLaunch): void {
  let isDirectory = false;
  try {
    isDirectory = statSync(request.cwd).isDirectory();
  } catch {
    throw new SpawnError(`working directory does not exist: ${request.cwd}`);
  }
  if (!isDirectory) throw new SpawnError(`working directory is not a directory: ${request.cwd}`);
  if (!resolveExecutable(request.shell, request.env ?? threadEnv)) {
    throw new SpawnError(`shell not found or not executable: ${request.shell}`);
  }
}

function resolveExecutable(name: string, env: Readonly<Record<string, string>>): string | null {
  const candidates = isAbsolute(name) || name.includes("/")
    ? [name]
    : (env.PATH ?? "").split(delimiter).filter(Boolean).map((dir) => join(dir, name));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // try the next PATH entry
    }
  }
  return null;
}

/**
 * Starts the job's process. `requested` runs exactly once, before any of the process's output can be read and also
 * when the spawn fails: through the spawner, once the request is out and the spawner is forking (work done there costs
 * the start nothing); otherwise before the fork.
 */
export async function spawnProcess(request: ProcessLaunch, requested: () => void = () => {}): Promise<ProcessIo> {
  let pending: (() => void) | null = requested;
  const once = () => {
    const run = pending;
    pending = null;
    run?.();
  };
  try {
    checkSpawnable(request);
    if (request.io.kind === "pty") {
      once();
      return await spawnPty(request, request.io);
    }
    if (request.spawner !== undefined) {
      const outcome = await spawnThroughSpawner(request.spawner, {
        shell: request.shell,
        command: request.command,
        cwd: request.cwd,
        env: jobEnv(request),
        stdin: request.io.stdin,
        tag: request.tag,
      }, once);
      if (outcome.kind === "spawned") return outcome.io;
      if (outcome.kind === "failed") throw new SpawnError(`could not start ${request.shell}: ${outcome.message}`);
      // The spawner did not answer: this thread forks the process itself, as it would without one.
    }
    once();
    return await spawnPipes(request, request.io.stdin);
  } finally {
    once();
  }
}

/** Forks a pipe job's process on this thread: only where the spawner is off or gone, so loaded only then. */
async function spawnPipes(request: ProcessLaunch, withStdin: boolean): Promise<ProcessIo> {
  const { spawn: spawnChild } = await import("node:child_process");
  // Read before the fork, never after (see spawner/spawner.ts).
  const spawnedAt = performance.now();
  const child: ChildProcess = spawnChild(request.shell, ["-c", request.command], {
    cwd: request.cwd,
    env: jobEnv(request),
    // A new session and process group: the pid is the pgid, and signals to -pgid reach every descendant.
    detached: true,
    stdio: [withStdin ? "pipe" : "ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    child.once("error", (error) => reject(new SpawnError(`could not start ${request.shell}: ${error.message}`)));
    child.once("spawn", () =>
      resolve(
        pipeIo({
          pid: child.pid!,
          spawnedAt,
          stdout: child.stdout!,
          stderr: child.stderr!,
          stdin: child.stdin,
          onExit: (listener) => child.once("exit", (code, signal) => listener(code, signal)),
        }),
      ),
    );
  });
}

async function spawnPty(request: ProcessLaunch, io: { cols: number; rows: number }): Promise<ProcessIo> {
  const pty = await import("@lydell/node-pty");
  let term: import("@lydell/node-pty").IPty;
  // Read before the fork, never after (see spawner/spawner.ts).
  const spawnedAt = performance.now();
  try {
    term = pty.spawn(request.shell, ["-c", request.command], {
      name: "xterm-256color",
      cols: io.cols,
      rows: io.rows,
      cwd: request.cwd,
      env: jobEnv(request),
      // Raw bytes: decoding belongs to our framing, which handles sequences split across reads.
      encoding: null,
    });
  } catch (error) {
    throw new SpawnError(`could not start a terminal for ${request.shell}: ${(error as Error).message}`);
  }
  // node-pty rethrows socket errors other than EIO unless someone listens.
  (term as unknown as { on?(event: string, listener: (error: unknown) => void): void }).on?.("error", () => {});
  // Listen from the first moment and hold what arrives until the actor subscribes: events are not replayed.
  let dataListener: ((source: SourceName, chunk: Uint8Array) => void) | null = null;
  const early: Uint8Array[] = [];
  const deliver = (chunk: Uint8Array): void => {
    if (dataListener) dataListener("pty", chunk);
    else early.push(chunk);
  };
  term.onData((data) => deliver(typeof data === "string" ? Buffer.from(data) : (data as Uint8Array)));
  readLeftoversBeforeClose(term, deliver);
  let exit: { code: number | null; signal: string | null } | null = null;
  const exitListeners: ((code: number | null, signal: string | null) => void)[] = [];
  const drained: (() => void)[] = [];
  // node-pty reports exit only after its socket closed, and the socket closes only once what the terminal still held
  // has been read (readLeftoversBeforeClose): all output has been delivered by then.
  term.onExit(({ exitCode, signal }) => {
    exit = signal ? { code: null, signal: signalName(signal) } : { code: exitCode, signal: null };
    for (const listener of exitListeners) listener(exit.code, exit.signal);
    for (const listener of drained) listener();
  });
  // node-pty returns right after fork, before the child's setsid(): a stop sent to the group in that window would
  // find no group and claim success while the command goes on to run. Report the job only once its group exists.
  await untilGroupExists(term.pid, 2000, () => exit !== null);
  return {
    pid: term.pid,
    spawnedAt,
    kind: "pty",
    onData(listener) {
      dataListener = listener;
      for (const chunk of early.splice(0)) listener("pty", chunk);
    },
    onDrained(listener) {
      if (exit) listener();
      else drained.push(listener);
    },
    onExit(listener) {
      if (exit) listener(exit.code, exit.signal);
      else exitListeners.push(listener);
    },
    pause: () => term.pause(),
    resume: () => term.resume(),
    write(bytes) {
      if (exit) return 0;
      // The terminal's socket buffers internally; the bytes count as taken once handed over.
      term.write(Buffer.from(bytes) as unknown as string);
      return 0;
    },
    pendingWriteBytes: () => 0,
    endStdin: () => false,
    resize(cols, rows) {
      if (exit) return false;
      term.resize(cols, rows);
      return true;
    },
    abandonStreams() {
      // The terminal closes itself when its session ends; nothing to force here.
    },
  };
}

/** The parts of node-pty's Unix terminal (not in its typings) that hold the terminal's master side. */
interface UnixTerminalInternals {
  readonly fd?: unknown;
  readonly _socket?: { destroyed: boolean; destroy(error?: Error): unknown; read(): unknown };
}

/**
 * The most a pass reads from a terminal being closed: what Linux can hold for it (64 KiB of pending input plus the
 * 4 KiB line buffer) several times over, so a descendant that still writes into an open terminal cannot keep it going.
 */
const LEFTOVER_READ_LIMIT = 256 * 1024;

/**
 * node-pty closes its terminal's socket while the kernel may still hold output the command wrote before it exited.
 * When the command's end hangs up the terminal, libuv takes the hang-up after one short read for the end of the
 * output, but Linux moves a terminal's output to where a read finds it in steps (a 4 KiB line buffer, refilled by a
 * kernel worker): the read that saw the hang-up may have found only part of it. And when a descendant keeps the
 * terminal open, node-pty destroys the socket 200 ms after the exit whether or not its thread has polled since. So
 * every close first reads what is left, synchronously, while the descriptor is still open: a read of a hung-up
 * terminal waits for the kernel's pending output, then fails with EIO once there is none. See
 * docs/decisions/last-words.md.
 */
function readLeftoversBeforeClose(term: unknown, deliver: (chunk: Uint8Array) => void): void {
  const { fd, _socket: socket } = term as UnixTerminalInternals;
  if (typeof fd !== "number" || !socket) return;
  const destroy = socket.destroy.bind(socket);
  let closing = false;
  socket.destroy = (error?: Error) => {
    // Only the first close, and not again from within it: after it the descriptor is closed, and its number may
    // already belong to another file.
    if (!closing && !socket.destroyed) {
      closing = true;
      // What the socket took but has not handed on (a paused terminal) comes before what the kernel still holds;
      // read() hands it to the data listeners.
      while (socket.read() !== null);
      for (let total = 0; total < LEFTOVER_READ_LIMIT;) {
        const chunk = Buffer.allocUnsafe(64 * 1024);
        let bytes = 0;
        try {
          bytes = readSync(fd, chunk);
        } catch {
          break; // EIO: the terminal is hung up and empty; EAGAIN: it is still open and has nothing more now.
        }
        if (bytes === 0) break;
        total += bytes;
        deliver(chunk.subarray(0, bytes));
      }
    }
    return destroy(error);
  };
}

async function untilGroupExists(pgid: number, timeoutMs: number, exited: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!exited() && !(await groupAlive(pgid)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 1));
}

/** node-pty reports signals as numbers; the protocol speaks names (SIGTERM, SIGKILL). */
function signalName(signal: number): string {
  const found = Object.entries(osConstants.signals).find(([, value]) => value === signal);
  return found ? found[0] : String(signal);
}
