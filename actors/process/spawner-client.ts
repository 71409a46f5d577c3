/**
 * The actor's side of the spawner (spawner/spawner.ts): a pipe job's process started by the session's small spawner
 * process instead of by this thread, so that its fork does not copy Pi's whole memory
 * (docs/decisions/spawner.md). The actor connects one socket per stream the
 * child gets and one control socket; the child's stdio are those sockets themselves, so its bytes come straight
 * here, exactly as from a child this thread spawned.
 */
import { connect, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { threadId } from "node:worker_threads";
import { LineReader, line, onThisClock, parseReply, type Hello, type SpawnRequest, type StreamRole } from "../../mailbox/spawner-protocol.ts";
import { signalTagged, taggedProcesses } from "../../shared/process-table/index.ts";
import { pipeIo } from "./pipe-io.ts";
import { waitGroupGone } from "../../shared/process-group.ts";
import type { ProcessIo } from "./io.ts";

/**
 * How long a job tries to reach the spawner (it listened when the job started, but may have ended since) before this
 * thread spawns the process itself.
 */
const CONNECT_WAIT_MS = 500;
const CONNECT_RETRY_MS = 10;

export interface SpawnerJob {
  shell: string;
  command: string;
  cwd: string;
  env: Record<string, string>;
  stdin: boolean;
  /** The job's tag: what to look for if the spawner ends in the middle of the spawn. */
  tag: string;
}

/** Connects once and says hello; rejects with the connection's error. */
function open(path: string, hello: Hello): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    socket.once("error", reject);
    socket.once("connect", () => {
      socket.off("error", reject);
      socket.write(line(hello));
      resolve(socket);
    });
  });
}

/** Every connection of one spawn, or null when the spawner does not answer (not started yet, or gone). */
async function openAll(path: string, request: SpawnRequest): Promise<{ control: Socket; streams: Map<StreamRole, Socket> } | null> {
  const roles: StreamRole[] = request.stdin ? ["stdout", "stderr", "stdin"] : ["stdout", "stderr"];
  const deadline = performance.now() + CONNECT_WAIT_MS;
  for (;;) {
    const opened = await Promise.allSettled([open(path, request), ...roles.map((role) => open(path, { spawn: request.spawn, role }))]);
    if (opened.every((result) => result.status === "fulfilled")) {
      const [control, ...streams] = opened.map((result) => (result as PromiseFulfilledResult<Socket>).value);
      return { control: control!, streams: new Map(roles.map((role, index) => [role, streams[index]!])) };
    }
    // Without all of its connections the spawner never starts the request: closing what did connect drops it there.
    for (const result of opened) if (result.status === "fulfilled") result.value.destroy();
    if (performance.now() >= deadline) return null;
    await sleep(CONNECT_RETRY_MS);
  }
}

/**
 * What became of a spawn through the spawner: the process; `unreachable` when the spawner did not answer (then nothing
 * was started, and the caller spawns the process itself); or why it could not be started.
 */
export type SpawnerOutcome = { kind: "spawned"; io: ProcessIo } | { kind: "unreachable" } | { kind: "failed"; message: string };

let spawns = 0;

/**
 * Names one spawn to the spawner, for matching its connections: unique among the threads of this process, which are
 * all the spawner serves. Not a random UUID: node:crypto costs every thread a few milliseconds to load.
 */
function spawnId(): string {
  spawns += 1;
  return `${threadId}.${spawns}`;
}

/**
 * Starts the job's process through the spawner listening at `path`. `requested` runs once every connection has said
 * its first line, while the spawner assembles the request and forks (not when the spawner did not answer).
 */
export async function spawnThroughSpawner(path: string, job: SpawnerJob, requested: () => void = () => {}): Promise<SpawnerOutcome> {
  const request: SpawnRequest = {
    // Unique in the session; it need not be secret, the socket is in a directory only this user can enter.
    spawn: spawnId(),
    role: "control",
    shell: job.shell,
    command: job.command,
    cwd: job.cwd,
    env: job.env,
    stdin: job.stdin,
  };
  const connections = await openAll(path, request);
  if (connections === null) return { kind: "unreachable" };
  const { control, streams } = connections;
  const stdout = streams.get("stdout")!;
  const stderr = streams.get("stderr")!;
  const stdin = streams.get("stdin") ?? null;
  // Nothing is read from the child's stdin connection: it only carries bytes to the child.
  stdin?.on("data", () => {});

  const reader = new LineReader();
  let exitListener: ((code: number | null, signal: string | null) => void) | null = null;
  let exit: { code: number | null; signal: string | null } | null = null;
  const reportExit = (code: number | null, signal: string | null) => {
    if (exit !== null) return;
    exit = { code, signal };
    exitListener?.(code, signal);
  };
  let settle: (value: { pid: number; spawnedAt: number } | { error: string } | null) => void;
  const answer = new Promise<{ pid: number; spawnedAt: number } | { error: string } | null>((resolve) => (settle = resolve));
  let pid: number | null = null;
  control.on("data", (chunk: Buffer) => {
    let lines: string[];
    try {
      lines = reader.push(chunk);
    } catch {
      return void control.destroy();
    }
    for (const text of lines) {
      const reply = parseReply(text);
      if (reply === null) continue;
      if (reply.type === "spawned") {
        pid = reply.pid;
        settle({ pid: reply.pid, spawnedAt: onThisClock(reply.at) });
      } else if (reply.type === "error") settle({ error: reply.message });
      else reportExit(reply.code, reply.signal);
    }
  });
  control.on("error", () => {});
  control.once("close", () => {
    settle(null);
    // The spawner ended while the process runs: its exit status is lost with it, but its end is not. The job is over
    // once its group is gone (the streams tell the rest).
    if (pid !== null && exit === null) void untilGone(pid).then(() => reportExit(null, null));
  });

  requested();
  const answered = await answer;
  if (answered === null || "error" in answered) {
    for (const socket of [control, ...streams.values()]) socket.destroy();
    if (answered !== null) return { kind: "failed", message: answered.error };
    // The spawner ended in the middle of the spawn: a process may exist that nobody reported. It carries the tag.
    signalTagged((await taggedProcesses(job.tag)) ?? [], "SIGKILL");
    return { kind: "failed", message: "the spawner process ended during the spawn" };
  }
  const io = pipeIo({
    pid: answered.pid,
    spawnedAt: answered.spawnedAt,
    stdout,
    stderr,
    stdin,
    onExit(listener) {
      if (exit !== null) listener(exit.code, exit.signal);
      else exitListener = listener;
    },
  });
  return { kind: "spawned", io };
}

async function untilGone(pgid: number): Promise<void> {
  while (!(await waitGroupGone(pgid, 60_000))) {
    // Still running: keep waiting. A stop kills the group, and then this returns.
  }
}
