/**
 * The session's spawner process as the job runtime keeps it. It is started early, with the warm threads, so that the
 * fork of every pipe job copies a small process instead of Pi and all its actor threads
 * (docs/decisions/spawner.md). Actors are handed its socket once it listens, and
 * spawn the process themselves before that or whenever it does not answer: a job never waits for the spawner, and a
 * spawner that fails costs speed, never a job. One that dies is started again for later jobs, a few times at most.
 *
 * Two programs speak its protocol (mailbox/spawner-protocol.ts): spawner/spawner.pl, one perl process that forks each
 * job, where a complete perl is on the PATH; otherwise spawner/spawner.ts, a Node process that starts each job through
 * a perl launcher (or, without perl, in a session of its own). One that ends before it listens (no perl, a perl without
 * the modules it loads) is replaced by the Node one at once.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { autogroupEnabled, STARTING_SESSION_NICE, setSessionNice } from "../../shared/process-table/autogroup.ts";
import { perlSpawnerUrl, spawnerUrl } from "../../shared/entry-url.ts";
import { MAX_LINE_BYTES, READY_LINE } from "../../mailbox/spawner-protocol.ts";
import { JOB_NICE_STEPS } from "../../spawner/job-group.ts";

const SOCKET_NAME = "spawner.sock";
/** Starts per runtime: a spawner that keeps dying is given up on, and actors spawn their processes themselves. */
const MAX_STARTS = 4;
/** A spawner that does not listen by then is not going to; it is ended and the next job may start another. */
const READY_WAIT_MS = 10_000;
/** How long a stopping spawner has to exit on its own before it is killed. */
const STOP_WAIT_MS = 1_000;

export interface Spawner {
  /** The socket to give a job's actor, or null while no spawner listens (the actor then spawns the process itself). */
  socketPath(): string | null;
  /** Resolves true once the spawner listens, false when it ended first or none runs. */
  ready(): Promise<boolean>;
  /**
   * Whether Pi's process is starting jobs. Its session is the jobs' scheduling group (spawner/job-group.ts), which
   * then yields to Pi's (STARTING_SESSION_NICE), so that busy jobs never starve the thread boots of the next ones, and
   * is back at nice 0 once every start is over. Never awaited: a start never waits for the kernel.
   */
  setStarting(starting: boolean): void;
  /**
   * Ends the spawner; the processes it started are not affected (they are the jobs', stopped by their actors). It
   * exits as soon as its stdin closes; one that has not within `waitMs` is killed.
   */
  stop(waitMs?: number): Promise<void>;
}

/** Which program serves as the spawner: perl where it can, Node otherwise (see above). */
export type SpawnerProgram = "perl" | "node";

export interface SpawnerOptions {
  /** The first program to try; "node" skips the perl one. */
  program?: SpawnerProgram;
  /** The perl to run, looked up on the PATH by name. */
  perl?: string;
}

interface Running {
  program: SpawnerProgram;
  child: ChildProcess;
  ready: Promise<boolean>;
  /** Whether it listens now. */
  listening: boolean;
  /** Its session's nice value as last written (a new session starts at 0), and whether a write is under way. */
  nice: number;
  writing: boolean;
}

/** Only where the kernel schedules by session is there a session's nice value to set. */
const SESSIONS_SCHEDULED = autogroupEnabled();

/** The command line of each program, listening on `path`. */
function commandOf(program: SpawnerProgram, path: string, perl: string): { file: string; args: string[]; env?: Record<string, string> } {
  if (program === "node") return { file: process.execPath, args: [fileURLToPath(spawnerUrl()), path] };
  const mode = SESSIONS_SCHEDULED ? "group" : "session";
  return {
    file: perl,
    args: [fileURLToPath(perlSpawnerUrl()), path, String(JOB_NICE_STEPS), mode, READY_LINE, String(MAX_LINE_BYTES)],
    // An environment of its own: nothing in Pi's (PERL5OPT, PERL5LIB, a broken locale) may change or garble it. Each
    // job's environment comes whole with its request.
    env: { LC_ALL: "C", PATH: process.env.PATH ?? "/usr/bin:/bin" },
  };
}

/** Starts the spawner listening on a socket in `dir`, the session's private (0700) log directory. */
export function createSpawner(dir: string, options: SpawnerOptions = {}): Spawner {
  const path = join(dir, SOCKET_NAME);
  const perl = options.perl ?? "perl";
  let program: SpawnerProgram = options.program ?? "perl";
  let running: Running | null = null;
  let starts = 0;
  let stopped = false;

  const start = (): Running | null => {
    if (stopped || starts >= MAX_STARTS) return null;
    starts += 1;
    const command = commandOf(program, path, perl);
    let child: ChildProcess;
    try {
      child = spawn(command.file, command.args, {
        ...(command.env ? { env: command.env } : {}),
        // Its stdin is its lifeline: it exits when the runtime (or Pi) closes it. Its only output is the ready line.
        stdio: ["pipe", "pipe", "ignore"],
        // Its own session: the terminal's signals (Ctrl-C outside Pi's raw mode) are not for it, and the pipe jobs it
        // starts share it as their scheduling group.
        detached: true,
      });
    } catch {
      return null;
    }
    // It must not keep Pi alive, nor take Pi down with an error on one of its pipes.
    child.unref();
    child.on("error", () => {});
    child.stdin?.on("error", () => {});
    (child.stdin as unknown as { unref?(): void } | null)?.unref?.();
    let started: Running;
    const ready = new Promise<boolean>((resolve) => {
      let seen = "";
      const timer = setTimeout(() => {
        resolve(false);
        child.kill("SIGKILL");
      }, READY_WAIT_MS);
      timer.unref();
      child.stdout?.on("data", (chunk: Buffer) => {
        seen += chunk.toString("utf8");
        if (!seen.includes(READY_LINE)) return;
        clearTimeout(timer);
        child.stdout?.destroy();
        started.listening = true;
        resolve(true);
      });
      // A perl spawner that ends before it listens (or never starts: perl missing) gives way to the Node one.
      let ended = false;
      const onEnd = () => {
        if (ended) return;
        ended = true;
        clearTimeout(timer);
        const listened = started.listening;
        started.listening = false;
        if (listened || started.program !== "perl" || stopped) return resolve(false);
        program = "node";
        const next = start();
        if (running === started) running = next;
        resolve(next?.ready ?? false);
      };
      child.once("exit", onEnd);
      child.on("error", () => {
        if (child.pid === undefined) onEnd();
      });
    });
    (child.stdout as unknown as { unref?(): void } | null)?.unref?.();
    started = { program, child, ready, listening: false, nice: 0, writing: false };
    // A spawner started again while jobs start: its new session yields too.
    void ready.then(() => applyNice());
    child.once("exit", () => {
      if (running === started) running = null;
    });
    return started;
  };

  /** The nice value the jobs' session should have now. */
  let wanted = 0;
  /** One write at a time, always of what is wanted by the time it goes out; a refused write ends the attempts. */
  const applyNice = () => {
    const current = running;
    if (!SESSIONS_SCHEDULED || current === null || current.writing || current.nice === wanted || current.child.pid === undefined) return;
    const nice = wanted;
    current.writing = true;
    void setSessionNice(nice, current.child.pid).then((taken) => {
      current.writing = false;
      if (!taken) return;
      current.nice = nice;
      applyNice();
    });
  };

  running = start();
  return {
    setStarting(starting) {
      wanted = starting ? STARTING_SESSION_NICE : 0;
      applyNice();
    },
    socketPath() {
      running ??= start();
      return running?.listening ? path : null;
    },
    ready: () => running?.ready ?? Promise.resolve(false),
    async stop(waitMs = STOP_WAIT_MS) {
      stopped = true;
      const current = running;
      running = null;
      if (current === null || current.child.exitCode !== null || current.child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => current.child.once("exit", () => resolve()));
      // Held while it stops: a shutdown waits for it, and an unreferenced child's exit would never be heard.
      current.child.ref();
      current.child.stdin?.end();
      const timer = setTimeout(() => current.child.kill("SIGKILL"), Math.min(waitMs, STOP_WAIT_MS));
      await exited;
      clearTimeout(timer);
    },
  };
}
