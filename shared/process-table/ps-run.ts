/**
 * Running `ps` and `lsof` for the portable backend (ps-table.ts): asynchronously, bounded in time and output, in the C
 * locale (`lstart` is printed with the locale's month names otherwise). Null when the program cannot run here or did not
 * answer in time: the caller then knows nothing, never "none".
 */
import { execFile, spawnSync } from "node:child_process";
import { parsePs, PS_COLUMNS, type PsRow } from "./ps-rows.ts";

/**
 * A `ps` or `lsof` answers in tens of milliseconds, and in seconds on a machine with every core busy; one that has not
 * in this long is not waited for.
 */
const TIMEOUT_MS = 10_000;
/** Environments included, a few KiB a process: this holds thousands of processes. */
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

const ENV = { ...process.env, LC_ALL: "C" };

/**
 * The options that show each process's environment after its command, at any width. The two `ps` spell it apart:
 * macOS's `-E` ("display the environment as well"; its `-e` selects every process, like `-A`, and `-x` keeps the
 * processes without a terminal in a selection), procps's BSD-style `e` ("show the environment after the command"; it has
 * no `-E`). docs/decisions/process-table.md.
 */
const SHOW_ENVIRONMENT = process.platform === "darwin" ? ["-Exww"] : ["eww"];

function psArgs(select: readonly string[]): string[] {
  return [...SHOW_ENVIRONMENT, ...select, "-o", PS_COLUMNS];
}

/** `-U <uid>`: the user's own processes, the only ones whose environment can be read; `-p a,b,c`: those pids. */
export function selectUser(): string[] {
  return ["-U", String(process.getuid?.() ?? 0)];
}
export function selectPids(pids: readonly number[]): string[] {
  return ["-p", pids.join(",")];
}

/**
 * The output, when the program ran: `ps -p` and `lsof` exit 1 when nothing matched, with nothing on stderr; that is an
 * empty answer, not a failure.
 */
function answer(error: (Error & { code?: unknown; killed?: boolean }) | null, stdout: string, stderr: string): string | null {
  if (error === null) return stdout;
  if (error.code === 1 && !error.killed && stderr.trim() === "") return stdout;
  return null;
}

function run(program: string, args: readonly string[]): Promise<{ output: string | null; pid: number | undefined }> {
  return new Promise((resolve) => {
    const child = execFile(program, args, { env: ENV, timeout: TIMEOUT_MS, maxBuffer: MAX_OUTPUT_BYTES, encoding: "latin1" }, (error, stdout, stderr) =>
      resolve({ output: answer(error, stdout, stderr), pid: child.pid }),
    );
  });
}

function runSync(program: string, args: readonly string[]): { output: string | null; pid: number | undefined } {
  const result = spawnSync(program, args, { env: ENV, timeout: TIMEOUT_MS, maxBuffer: MAX_OUTPUT_BYTES, encoding: "latin1" });
  if (result.error !== undefined || result.signal !== null) return { output: null, pid: result.pid };
  if (result.status === 0 || (result.status === 1 && result.stderr.trim() === "")) return { output: result.stdout, pid: result.pid };
  return { output: null, pid: result.pid };
}

/** The rows, less the `ps` process itself (its own environment may carry a tag: Pi running inside a job). */
function rowsOf(result: { output: string | null; pid: number | undefined }): PsRow[] | null {
  return result.output === null ? null : parsePs(result.output).filter((row) => row.pid !== result.pid);
}

export async function ps(select: readonly string[]): Promise<PsRow[] | null> {
  return rowsOf(await run("ps", psArgs(select)));
}

export function psNow(select: readonly string[]): PsRow[] | null {
  return rowsOf(runSync("ps", psArgs(select)));
}

/**
 * `lsof`'s answer on the listening TCP sockets of `pids` (`-F pn`: parse with parseLsofPorts); null without lsof. `-w`
 * keeps its warnings (a file system it cannot stat) off stderr, where they would make an answer look failed.
 */
export async function lsofListening(pids: readonly number[]): Promise<string | null> {
  const result = await run("lsof", ["-w", "-nP", "-a", "-iTCP", "-sTCP:LISTEN", "-p", pids.join(","), "-F", "pn"]);
  return result.output;
}

/** The answer the `ps` under way will give to every asker of this thread who asked before it began; see userProcesses. */
let next: Promise<PsRow[] | null> | null = null;

/**
 * The user's processes, one `ps` for every asker of a turn: the checks of 64 stops taken over at once come due
 * together and share it. One who asks while a `ps` is under way waits for the next, since the one under way may have
 * listed the processes before something the asker waits for happened.
 */
export function userProcesses(): Promise<PsRow[] | null> {
  next ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
    next = null;
    return ps(selectUser());
  });
  return next;
}
