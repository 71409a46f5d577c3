/**
 * Real `pi` processes in print, json and rpc modes, answered by the scripted faux model
 * (tests/fixtures/faux-provider.ts). Every run gets its own temp dir holding the agent dir (never the user's
 * ~/.pi), the faux script and, unless given one, the working directory; all of it is removed afterwards.
 * Each `pi` leads its own process group so that a test can always kill everything it started.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { FAUX_MODEL, FAUX_PROVIDER, type FauxScript, type FauxStep } from "../../fixtures/faux-provider.ts";
import { FAUX_PROVIDER_ENTRY, makeTempDir, NODE22, PI_CLI, PI_JOBS_ENTRY, piEnv, removeDir, REPO_ROOT } from "./paths.ts";
import { DEFAULT_WAIT_MS, pollUntil } from "./wait.ts";

export interface PiRunOptions {
  /** The faux model's answers, one per model request. */
  steps?: FauxStep[];
  /** Stream the answers at this many tokens per second instead of all at once. */
  tokensPerSecond?: number;
  /** Extensions after the faux provider (absolute, or relative to the repository root); default: pi-jobs. */
  extensions?: string[];
  /**
   * An agent dir the test prepared (e.g. with `pi install`) instead of a fresh one; it is kept after the run. Pi then
   * loads the packages its settings name, as it does for a user, so extension discovery stays on.
   */
  agentDir?: string;
  /** Working directory; a fresh temp dir when omitted. */
  cwd?: string;
  /** Persist the session here (default: `--no-session`). */
  sessionDir?: string;
  /** Load Pi's codemode and make it active. */
  codemode?: boolean;
  /** More CLI arguments, placed before the prompt. */
  args?: string[];
  env?: Record<string, string>;
  /** Deadline for the whole run (print/json) or for startup (rpc). */
  timeoutMs?: number;
}

export interface PiExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface PiRunResult extends PiExit {
  stdout: string;
  stderr: string;
}

/** One JSONL record from `--mode json` or `--mode rpc`. */
export type PiRecord = { type: string } & Record<string, unknown>;

export interface PiJsonResult extends PiRunResult {
  /** Every JSONL event, in order (the first is the session header). */
  events: PiRecord[];
}

const RUN_TIMEOUT_MS = 60_000;
const live = new Set<ChildProcess>();

/**
 * Signals Pi's whole process group. After Pi itself has exited the group may still hold processes it started;
 * `sweep` reaches those too (a group id is not reused while any member lives).
 */
function killGroup(child: ChildProcess, signal: NodeJS.Signals, sweep = false): void {
  if (child.pid === undefined) return;
  if (!sweep && (child.exitCode !== null || child.signalCode !== null)) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

// A test that throws between spawn and cleanup must still not leave a Pi behind.
process.on("exit", () => {
  for (const child of live) killGroup(child, "SIGKILL", true);
});

/** One Pi run laid out on disk; the caller removes `runDir` when the run is over. */
export interface PreparedPiRun {
  runDir: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Arguments after the CLI script: `node22 PI_CLI ...args`. */
  args: string[];
}

/** Temp dir, agent dir, faux script, environment and arguments for one Pi run (also used by the tmux harness). */
export function preparePiRun(options: PiRunOptions, modeArgs: string[], messages: string[] = []): PreparedPiRun {
  const runDir = makeTempDir("cli");
  let agentDir = options.agentDir;
  if (agentDir === undefined) {
    agentDir = join(runDir, "agent");
    mkdirSync(agentDir);
  }
  let cwd = options.cwd;
  if (cwd === undefined) {
    cwd = join(runDir, "work");
    mkdirSync(cwd);
  }
  const scriptPath = join(runDir, "faux-script.json");
  const script: FauxScript = {
    steps: options.steps ?? [],
    ...(options.tokensPerSecond === undefined ? {} : { tokensPerSecond: options.tokensPerSecond }),
  };
  writeFileSync(scriptPath, JSON.stringify(script));
  const extensions = (options.extensions ?? [PI_JOBS_ENTRY]).map((path) =>
    isAbsolute(path) || path.startsWith("builtin:") ? path : resolve(REPO_ROOT, path),
  );
  const args = [
    ...(options.sessionDir === undefined ? ["--no-session"] : ["--session-dir", options.sessionDir]),
    // No discovery: only what the test names is loaded, whatever the machine or the checkout holds (a prepared
    // agent dir is the exception: what was installed into it is the point of the run).
    ...(options.agentDir === undefined ? ["-ne"] : []),
    "-ns",
    "-np",
    "-nc",
    "-e",
    FAUX_PROVIDER_ENTRY,
    ...extensions.flatMap((path) => ["-e", path]),
    ...(options.codemode === true ? ["-e", "builtin:codemode", "--tools", "+codemode"] : []),
    "--model",
    `${FAUX_PROVIDER}/${FAUX_MODEL}`,
    ...modeArgs,
    ...(options.args ?? []),
    // "--" so that a message starting with "-" is never taken for an option.
    ...(messages.length > 0 ? ["--", ...messages] : []),
  ];
  const env = piEnv(agentDir, { PI_FAUX_SCRIPT: scriptPath, ...options.env });
  return { runDir, cwd, env, args };
}

function spawnPi(prepared: PreparedPiRun, stdin: "ignore" | "pipe"): ChildProcess {
  // Node 22 explicitly: `pi` is `#!/usr/bin/env node`, and the system node may be too old for it.
  const child = spawn(NODE22, [PI_CLI, ...prepared.args], {
    cwd: prepared.cwd,
    env: prepared.env,
    stdio: [stdin, "pipe", "pipe"],
    detached: true,
  });
  live.add(child);
  child.once("exit", () => live.delete(child));
  return child;
}

function exitOf(child: ChildProcess): Promise<PiExit> {
  return new Promise((resolveExit) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolveExit({ code: child.exitCode, signal: child.signalCode });
      return;
    }
    // "close" rather than "exit": stdout and stderr are fully read by then.
    child.once("close", (code, signal) => resolveExit({ code, signal }));
  });
}

/** Split on LF only: JSON strings may hold U+2028/U+2029, which readline would treat as line ends. */
function parseJsonl(text: string): { records: PiRecord[]; badLines: string[] } {
  const records: PiRecord[] = [];
  const badLines: string[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line === "") continue;
    try {
      const value: unknown = JSON.parse(line);
      if (typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string") {
        records.push(value as PiRecord);
      } else {
        badLines.push(line);
      }
    } catch {
      badLines.push(line);
    }
  }
  return { records, badLines };
}

async function runToExit(prompt: string, options: PiRunOptions, modeArgs: string[]): Promise<PiRunResult> {
  const prepared = preparePiRun(options, modeArgs, [prompt]);
  const child = spawnPi(prepared, "ignore");
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const timeoutMs = options.timeoutMs ?? RUN_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  try {
    const exit = await Promise.race([
      exitOf(child),
      new Promise<"timeout">((resolveTimeout) => {
        timer = setTimeout(() => resolveTimeout("timeout"), timeoutMs);
      }),
    ]);
    if (exit === "timeout") {
      throw new Error(`pi ${modeArgs.join(" ")} did not exit within ${timeoutMs} ms\n--- stderr ---\n${stderr}\n--- stdout ---\n${stdout.slice(-4000)}`);
    }
    return { ...exit, stdout, stderr };
  } finally {
    clearTimeout(timer);
    killGroup(child, "SIGKILL", true);
    removeDir(prepared.runDir);
  }
}

/** `pi -p <prompt>`: prints the session's last assistant text and exits when the agent settles. */
export function runPrint(prompt: string, options: PiRunOptions = {}): Promise<PiRunResult> {
  return runToExit(prompt, options, ["-p"]);
}

/** `pi --mode json <prompt>`: every session event as one JSON line. Non-JSON stdout lines fail the run. */
export async function runJson(prompt: string, options: PiRunOptions = {}): Promise<PiJsonResult> {
  const result = await runToExit(prompt, options, ["--mode", "json"]);
  const { records, badLines } = parseJsonl(result.stdout);
  if (badLines.length > 0) {
    throw new Error(`pi --mode json wrote non-JSON lines to stdout:\n${badLines.slice(0, 5).join("\n")}`);
  }
  return { ...result, events: records };
}

export interface RpcSession {
  /** Every record Pi wrote to stdout, in order (responses and events). */
  readonly records: readonly PiRecord[];
  /** Lines on stdout that were not JSON records: a protocol violation. */
  readonly badLines: readonly string[];
  stderr(): string;
  /** Write one command; an `id` is added when missing. Returns the id. */
  send(command: { type: string; id?: string } & Record<string, unknown>): string;
  /** Send a command and wait for its response (success or not). */
  request(command: { type: string; id?: string } & Record<string, unknown>, timeoutMs?: number): Promise<PiRecord>;
  /** `prompt` command; resolves with its response (accepted), not when the run ends. */
  prompt(message: string, timeoutMs?: number): Promise<PiRecord>;
  /** First record (past or future) matching `predicate`; `index` lets a test look only past a mark. */
  waitFor(predicate: (record: PiRecord, index: number) => boolean, timeoutMs?: number): Promise<PiRecord>;
  waitForSettled(count: number, timeoutMs?: number): Promise<void>;
  settledCount(): number;
  /** Close stdin (Pi's orderly shutdown) and wait for the exit; SIGTERM, then SIGKILL past the deadline. */
  close(timeoutMs?: number): Promise<PiExit>;
}

/** `pi --mode rpc`: a long-lived Pi driven by JSONL commands. Resolves once Pi answers a first command. */
export async function startRpc(options: PiRunOptions = {}): Promise<RpcSession> {
  const prepared = preparePiRun(options, ["--mode", "rpc"]);
  const child = spawnPi(prepared, "pipe");
  const exited = exitOf(child);
  const records: PiRecord[] = [];
  const badLines: string[] = [];
  let stderr = "";
  let pending = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    pending += chunk;
    const cut = pending.lastIndexOf("\n");
    if (cut < 0) return;
    const parsed = parseJsonl(pending.slice(0, cut));
    pending = pending.slice(cut + 1);
    records.push(...parsed.records);
    badLines.push(...parsed.badLines);
  });
  // A write after Pi died must fail the test through its wait, not crash the runner with EPIPE.
  child.stdin?.on("error", () => undefined);

  let nextId = 0;
  let closed: Promise<PiExit> | undefined;
  const describe = (): string =>
    `records: ${records
      .slice(-30)
      .map((r) => r.type)
      .join(", ")}\n--- stderr ---\n${stderr.slice(-4000)}`;
  const settledCount = (): number => records.filter((r) => r.type === "agent_settled").length;
  const alive = (): boolean => child.exitCode === null && child.signalCode === null;

  const waitFor = (predicate: (record: PiRecord, index: number) => boolean, timeoutMs = DEFAULT_WAIT_MS): Promise<PiRecord> =>
    pollUntil(
      () => {
        const found = records.find(predicate);
        if (found !== undefined) return found;
        if (!alive()) throw new Error(`pi --mode rpc exited while a test waited for a record\n${describe()}`);
        return undefined;
      },
      { timeoutMs, what: "a matching rpc record", describe },
    );
  const send: RpcSession["send"] = (command) => {
    const id = command.id ?? `t${++nextId}`;
    child.stdin?.write(`${JSON.stringify({ ...command, id })}\n`);
    return id;
  };
  const request: RpcSession["request"] = (command, timeoutMs) => {
    const id = send(command);
    return waitFor((r) => r.type === "response" && r.id === id, timeoutMs);
  };
  const close = (timeoutMs = DEFAULT_WAIT_MS): Promise<PiExit> => {
    closed ??= (async () => {
      try {
        child.stdin?.end();
        const deadline = (ms: number): Promise<"timeout"> =>
          new Promise((resolveTimeout) => setTimeout(() => resolveTimeout("timeout"), ms).unref());
        let exit = await Promise.race([exited, deadline(timeoutMs)]);
        if (exit === "timeout") {
          killGroup(child, "SIGTERM");
          exit = await Promise.race([exited, deadline(5_000)]);
        }
        if (exit === "timeout") {
          killGroup(child, "SIGKILL");
          exit = await exited;
        }
        return exit;
      } finally {
        // Whatever Pi left in its group (job processes of a broken shutdown) goes too.
        killGroup(child, "SIGKILL", true);
        removeDir(prepared.runDir);
      }
    })();
    return closed;
  };

  try {
    // get_state proves the process is up and the extensions loaded before the test sends anything.
    await request({ type: "get_state" }, options.timeoutMs ?? RUN_TIMEOUT_MS);
  } catch (error) {
    await close(1_000);
    throw error;
  }

  return {
    records,
    badLines,
    stderr: () => stderr,
    send,
    request,
    prompt: (message, timeoutMs) => request({ type: "prompt", message }, timeoutMs),
    waitFor,
    waitForSettled: async (count, timeoutMs = DEFAULT_WAIT_MS) => {
      await pollUntil(
        () => {
          if (settledCount() >= count) return true;
          if (!alive()) throw new Error(`pi --mode rpc exited before ${count} agent_settled record(s)\n${describe()}`);
          return undefined;
        },
        { timeoutMs, what: `${count} agent_settled record(s)`, describe },
      );
    },
    settledCount,
    close,
  };
}
