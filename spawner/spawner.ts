/**
 * The spawner: a small Node process, one per job runtime, that starts pipe jobs' processes on behalf of their actors.
 * Where a complete perl is on the PATH, spawner/spawner.pl serves instead: the same protocol, one process that forks
 * each job itself rather than exec a perl launcher for it (host/runtime/spawner.ts chooses).
 *
 * Why a process of its own: starting a process forks the one that asks, and a fork costs what the asking process's
 * memory costs — every page table of Pi and of every actor thread is copied and marked copy-on-write, then thrown away
 * by the child's exec, while the fork holds the whole process's memory map locked
 * (docs/decisions/spawner.md). Forked from here, a job costs what a spawn from a
 * small process costs.
 *
 * The spawner never sees a job's output: it hands the child the very sockets the actor connected (mailbox/
 * spawner-protocol.ts), closes its own copies and only reports the pid and, later, the exit. It keeps no state beyond
 * requests whose connections are still arriving, and it exits when its parent closes its stdin (the runtime's shutdown,
 * or Pi's death). Jobs it started are not its to stop: their actors and the host do that by process group and tag.
 *
 * Usage: `node spawner.js <socket path>`; it prints READY_LINE on stdout once it listens.
 */
import { unlinkSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { LineReader, line, monotonicMs, parseHello, READY_LINE, type Hello, type SpawnRequest, type SpawnerReply, type StreamRole } from "../mailbox/spawner-protocol.ts";
import { autogroupEnabled } from "../shared/process-table/autogroup.ts";
import { findPerl, startJob, type StartedJob } from "./job-group.ts";

/** A request whose connections have not all arrived by then is dropped: its actor gave up or died. */
const ASSEMBLY_TIMEOUT_MS = 30_000;

interface Assembly {
  request: SpawnRequest | null;
  control: Socket | null;
  streams: Partial<Record<StreamRole, Socket>>;
  timer: ReturnType<typeof setTimeout>;
}

const assemblies = new Map<string, Assembly>();

function assemblyOf(spawnId: string): Assembly {
  let assembly = assemblies.get(spawnId);
  if (assembly === undefined) {
    const timer = setTimeout(() => drop(spawnId), ASSEMBLY_TIMEOUT_MS);
    timer.unref();
    assembly = { request: null, control: null, streams: {}, timer };
    assemblies.set(spawnId, assembly);
  }
  return assembly;
}

function drop(spawnId: string): void {
  const assembly = assemblies.get(spawnId);
  if (assembly === undefined) return;
  assemblies.delete(spawnId);
  clearTimeout(assembly.timer);
  assembly.control?.destroy();
  for (const stream of Object.values(assembly.streams)) stream?.destroy();
}

function reply(control: Socket, message: SpawnerReply): void {
  if (!control.destroyed && control.writable) control.write(line(message));
}

function attach(hello: Hello, socket: Socket): void {
  const assembly = assemblyOf(hello.spawn);
  if (hello.role === "control") {
    if (assembly.control !== null) return void socket.destroy();
    assembly.request = hello;
    assembly.control = socket;
    // Read on (and ignore) so that the actor's going away is seen: before its process exists, it takes its request
    // with it.
    socket.on("data", () => {});
    socket.resume();
    socket.once("close", () => {
      if (assemblies.get(hello.spawn) === assembly) drop(hello.spawn);
    });
  } else {
    if (assembly.streams[hello.role] !== undefined) return void socket.destroy();
    assembly.streams[hello.role] = socket;
  }
  const { request, control, streams } = assembly;
  if (request === null || control === null || !streams.stdout || !streams.stderr || (request.stdin && !streams.stdin)) return;
  assemblies.delete(hello.spawn);
  clearTimeout(assembly.timer);
  start(request, control, streams as Record<"stdout" | "stderr", Socket> & Partial<Record<"stdin", Socket>>);
}

function start(request: SpawnRequest, control: Socket, streams: Record<"stdout" | "stderr", Socket> & Partial<Record<"stdin", Socket>>): void {
  const closeStreams = () => {
    for (const stream of Object.values(streams)) stream?.destroy();
  };
  // `exit` is told only after `spawned`: a command that ends at once can exit before the launcher's handshake closes.
  let state: "starting" | "spawned" | "failed" = "starting";
  let exited: SpawnerReply | null = null;
  const fail = (message: string) => {
    if (state !== "starting") return;
    state = "failed";
    closeStreams();
    reply(control, { type: "error", message });
    control.end();
  };
  const tellExit = () => {
    if (state !== "spawned" || exited === null) return;
    reply(control, exited);
    control.end();
  };
  // The job's clock starts as the fork is asked for: read after spawn() returned, a descheduled spawner would date
  // the job late, and its readiness and elapsed times would come out shorter than what the command really took.
  const forkedAt = monotonicMs();
  let job: StartedJob;
  try {
    job = startJob(
      {
        shell: request.shell,
        command: request.command,
        cwd: request.cwd,
        env: request.env,
        // The child's stdio are the actor's own connections: its bytes go straight to the actor.
        stdio: [streams.stdin ?? "ignore", streams.stdout, streams.stderr],
      },
      perl,
    );
  } catch (error) {
    return fail((error as Error).message);
  }
  const { child } = job;
  child.once("error", (error) => fail(error.message));
  // The child holds its own descriptors now; ours would keep the actor's streams open after the child is gone.
  child.once("spawn", closeStreams);
  child.once("exit", (code, signal) => {
    exited = { type: "exit", code, signal };
    tellExit();
  });
  void job.ready.then((error) => {
    if (error !== null) return fail(error);
    if (state !== "starting") return;
    state = "spawned";
    reply(control, { type: "spawned", pid: child.pid!, at: forkedAt });
    tellExit();
  });
}

/** Jobs share this process's session (one scheduling group) where that matters and perl can keep their groups apart. */
const perl = autogroupEnabled() ? findPerl() : null;

const socketPath = process.argv[2];
if (!socketPath) {
  process.stderr.write("usage: spawner <socket path>\n");
  process.exit(2);
}

const server = createServer((socket) => {
  socket.on("error", () => {});
  const reader = new LineReader();
  const onData = (chunk: Buffer) => {
    let lines: string[];
    try {
      lines = reader.push(chunk);
    } catch {
      return void socket.destroy();
    }
    if (lines.length === 0) return;
    // The first line is all a connection ever says to the spawner: a stream connection then belongs to the child,
    // and an actor writes a child's stdin only once it was told the child exists.
    socket.off("data", onData);
    socket.pause();
    const hello = parseHello(lines[0]!);
    if (hello === null) return void socket.destroy();
    attach(hello, socket);
  };
  socket.on("data", onData);
});

// The terminal's signals are not for the spawner: Pi decides when the session ends, and then closes stdin.
process.on("SIGINT", () => {});
process.stdin.on("end", () => process.exit(0));
process.stdin.on("error", () => process.exit(0));
process.stdin.resume();
process.on("exit", removeSocket);

/** A socket file left by an earlier spawner would make listen() fail. */
function removeSocket(): void {
  try {
    unlinkSync(socketPath!);
  } catch {
    // Not there.
  }
}

removeSocket();
server.listen(socketPath, () => process.stdout.write(`${READY_LINE}\n`));
