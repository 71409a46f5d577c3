/**
 * How the spawner gives a job a process group of its own inside the spawner's session, so that all of a Pi's pipe jobs
 * share one scheduling group (shared/process-table/autogroup.ts) while `kill(-pgid)` still reaches exactly one job.
 *
 * Node starts a child either in its parent's process group or in a new session (`detached`), never in a new group of
 * the same session. So where the session matters (Linux with autogroup on) a job is started through `perl`, which
 * calls setpgid(0, 0) and execs the job's shell: one process, whose pid stays the job's. The launcher runs with an
 * environment of its own, so that nothing in the job's (PERL5OPT, PERL5LIB, a broken locale) can change or garble
 * it; it reads the job's environment from descriptor 3, a socket to the spawner, and makes it the whole environment
 * of the exec, run JOB_NICE_STEPS below the spawner. Descriptor 3 is closed by the exec: its end of file tells the spawner the group exists and the
 * command runs, and anything written on it before is why it could not.
 *
 * Where perl is missing, or the kernel does not schedule by session, each job gets a session of its own, as a job its
 * actor forks does.
 */
import { spawn, spawnSync, type ChildProcess, type StdioOptions } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import type { Socket } from "node:net";

/**
 * perl: take the environment from fd 3, become a group leader, run the command `steps` nice steps below the spawner
 * (capped at 19), close fd 3 on exec, exec. Exit 126/127 as a shell would.
 */
const LAUNCHER = [
  "my $steps = shift @ARGV;",
  'open(my $c, "+<&=3") or exit 126;',
  "my $e = do { local $/; <$c> };",
  "%ENV = ();",
  'for (split /\\0/, $e) { my ($k, $v) = split /=/, $_, 2; $ENV{$k} = $v if defined $v && $k ne "" }',
  'setpgrp(0, 0) or do { syswrite $c, "setpgid: $!"; exit 126 };',
  "my $n = getpriority(0, 0) + $steps; setpriority(0, 0, $n > 19 ? 19 : $n);",
  // F_SETFD, FD_CLOEXEC (Linux values; this path runs only on Linux).
  "fcntl($c, 2, 1);",
  "exec { $ARGV[0] } @ARGV;",
  'syswrite $c, "$!"; exit 127;',
].join(" ");

/**
 * How far below the spawner a job's processes run inside the jobs' session. The spawner shares that session (it leads
 * it), so the jobs' own processes would otherwise starve the forks of the next ones: with 32 busy jobs beside it, a
 * new job's start through the spawner took seconds. A thread's nice value only orders it inside its session, so this
 * costs the jobs nothing against anything else (docs/decisions/scheduling-group.md).
 */
export const JOB_NICE_STEPS = 10;

/** The launcher's own environment: nothing from the job's, and a locale perl never warns about. */
const LAUNCHER_ENV = { LC_ALL: "C", PATH: "/usr/bin:/bin" };

/** An executable `perl` on the spawner's PATH that runs the launcher's syntax, or null. */
export function findPerl(path = process.env.PATH ?? ""): string | null {
  for (const dir of path.split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, "perl");
    try {
      accessSync(candidate, constants.X_OK);
    } catch {
      continue;
    }
    const probe = spawnSync(candidate, ["-c", "-e", LAUNCHER], { env: LAUNCHER_ENV, stdio: "ignore", timeout: 5000 });
    if (probe.status === 0) return candidate;
  }
  return null;
}

export interface JobStart {
  shell: string;
  command: string;
  cwd: string;
  env: Record<string, string>;
  stdio: StdioOptions;
}

/**
 * A started job: `ready` settles once the process runs the job's command in its own process group (null), or with
 * why it could not (the process then exits on its own).
 */
export interface StartedJob {
  child: ChildProcess;
  ready: Promise<string | null>;
}

/** Starts the job in a process group of its own, in this session through `perl` or else in a session of its own. */
export function startJob(job: JobStart, perl: string | null): StartedJob {
  if (perl === null) {
    // A new session and process group: the pid is the pgid.
    const child = spawn(job.shell, ["-c", job.command], { cwd: job.cwd, env: job.env, detached: true, stdio: job.stdio });
    return { child, ready: new Promise((resolve) => child.once("spawn", () => resolve(null))) };
  }
  const stdio = [...(job.stdio as unknown[]), "pipe"] as StdioOptions;
  const child = spawn(perl, ["-e", LAUNCHER, "--", String(JOB_NICE_STEPS), job.shell, "-c", job.command], { cwd: job.cwd, env: LAUNCHER_ENV, stdio });
  const handshake = child.stdio[3] as Socket;
  const ready = new Promise<string | null>((resolve) => {
    let said = "";
    handshake.on("data", (chunk: Buffer) => (said += chunk.toString("utf8")));
    handshake.once("close", () => resolve(said === "" ? null : said));
    handshake.on("error", () => {});
  });
  handshake.end(environmentBlock(job.env));
  return { child, ready };
}

function environmentBlock(env: Record<string, string>): string {
  let block = "";
  for (const [key, value] of Object.entries(env)) block += `${key}=${value}\0`;
  return block;
}
