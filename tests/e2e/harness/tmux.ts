/**
 * Pi's interactive TUI in a detached tmux session, driven like a user: type, press keys, read the screen.
 * Every session has its own tmux server (`-L <unique socket>`, no user config), so tests never meet each other
 * or the developer's tmux. Screens are read by polling with a deadline; nothing waits a fixed time.
 */
import { execFile } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { preparePiRun, type PiRunOptions } from "./cli.ts";
import { NODE22, PI_CLI, removeDir } from "./paths.ts";
import { DEFAULT_WAIT_MS, pollUntil } from "./wait.ts";

export interface TuiOptions extends PiRunOptions {
  cols?: number;
  rows?: number;
}

export interface TuiSession {
  /** tmux socket name (`tmux -L <socket>`) and session name, for a test that needs raw tmux. */
  readonly socket: string;
  readonly target: string;
  /** Key names as tmux knows them: "Enter", "Escape", "C-c", "C-d", "Up", ... */
  sendKeys(...keys: string[]): Promise<void>;
  /** Text typed literally (no key-name lookup). */
  type(text: string): Promise<void>;
  /** The visible screen as plain text. */
  capture(): Promise<string>;
  /** Polls the screen until `pattern` matches; returns that screen. */
  waitForPane(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Whether Pi (the pane's process) has exited. */
  exited(): Promise<boolean>;
  waitForExit(timeoutMs?: number): Promise<void>;
  /** Pi's exit status once it has exited, else null. */
  exitStatus(): Promise<number | null>;
  /** Kill the tmux server, Pi's process group and the temp dir. Safe to call twice. */
  kill(): Promise<void>;
}

let counter = 0;

function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

function tmuxSocketPath(socket: string): string {
  const uid = process.getuid?.() ?? 0;
  // tmux's own rule: TMUX_TMPDIR, else /tmp (not TMPDIR).
  return join(process.env.TMUX_TMPDIR ?? "/tmp", `tmux-${uid}`, socket);
}

export async function startTui(options: TuiOptions = {}): Promise<TuiSession> {
  const prepared = preparePiRun(options, []);
  const socket = `pi-jobs-${process.pid}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;
  const target = "pi";
  // The tmux server inherits this environment and hands it to the pane: Node 22 first, Pi isolated.
  const env: NodeJS.ProcessEnv = { ...prepared.env, TERM: "xterm-256color" };
  delete env.TMUX;
  delete env.TMUX_PANE;
  // The dead pane stays readable, so a Pi that crashes at startup shows why in the failure message.
  const config = join(prepared.runDir, "tmux.conf");
  writeFileSync(config, "set -g remain-on-exit on\nset -g history-limit 5000\n");

  const tmux = (...args: string[]): Promise<string> =>
    new Promise((resolveRun, reject) => {
      execFile("tmux", ["-L", socket, "-f", config, ...args], { env, timeout: 15_000 }, (error, stdout, stderr) => {
        if (error) reject(new Error(`tmux ${args.join(" ")} failed: ${error.message}\n${stderr}`));
        else resolveRun(stdout);
      });
    });

  let panePid: number | undefined;
  let killed: Promise<void> | undefined;
  const kill = (): Promise<void> => {
    killed ??= (async () => {
      try {
        await tmux("kill-server");
      } catch {
        // The server may already be gone.
      }
      if (panePid !== undefined) {
        try {
          // tmux makes the pane's process a session leader: its group holds Pi and whatever Pi started.
          process.kill(-panePid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
      rmSync(tmuxSocketPath(socket), { force: true });
      removeDir(prepared.runDir);
    })();
    return killed;
  };

  const command = `exec ${[NODE22, PI_CLI, ...prepared.args].map(shellQuote).join(" ")}`;
  try {
    await tmux(
      "new-session",
      "-d",
      "-s",
      target,
      "-x",
      String(options.cols ?? 110),
      "-y",
      String(options.rows ?? 30),
      "-c",
      prepared.cwd,
      command,
    );
    panePid = Number((await tmux("display-message", "-p", "-t", target, "#{pane_pid}")).trim());
  } catch (error) {
    await kill();
    throw error;
  }

  const capture = (): Promise<string> => tmux("capture-pane", "-p", "-t", target);
  const exited = async (): Promise<boolean> =>
    (await tmux("display-message", "-p", "-t", target, "#{pane_dead}")).trim() === "1";
  let lastScreen = "";

  return {
    socket,
    target,
    sendKeys: async (...keys) => {
      await tmux("send-keys", "-t", target, ...keys);
    },
    type: async (text) => {
      await tmux("send-keys", "-t", target, "-l", text);
    },
    capture,
    waitForPane: (pattern, timeoutMs = DEFAULT_WAIT_MS) =>
      pollUntil(
        async () => {
          lastScreen = await capture();
          return pattern.test(lastScreen) ? lastScreen : undefined;
        },
        { timeoutMs, what: `the screen to match ${pattern}`, describe: () => lastScreen },
      ),
    exited,
    waitForExit: async (timeoutMs = DEFAULT_WAIT_MS) => {
      await pollUntil(exited, {
        timeoutMs,
        what: "pi to exit",
        describe: () => lastScreen,
      });
    },
    exitStatus: async () => {
      if (!(await exited())) return null;
      return Number((await tmux("display-message", "-p", "-t", target, "#{pane_dead_status}")).trim());
    },
    kill,
  };
}
