/**
 * Nothing outlives Pi, in real Pi: a closed terminal (tmux kill-session) and another extension's `process.exit()`
 * leave no job process running; a Pi killed with SIGKILL leaves its jobs, and the next session ends them and says so
 * in one line, while a second live session's job keeps running.
 *
 * Every Pi here carries a random mark in its environment, which its jobs inherit, so the test finds exactly the
 * processes it caused among everything else on a shared machine. The crash test gives its Pis a private TMPDIR, so
 * their log directories and registries are theirs alone.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { TAG_VARIABLE } from "../../shared/process-table/index.ts";
import { startRpc, type RpcSession } from "./harness/cli.ts";
import { makeTempDir, removeDir } from "./harness/paths.ts";
import { startTui, type TuiSession } from "./harness/tmux.ts";
import { pollUntil } from "./harness/wait.ts";

const MARK = "PI_JOBS_TEST_MARK";
const linux = process.platform === "linux";
const cleanups: (() => unknown)[] = [];
let tui: TuiSession | undefined;

afterEach(async () => {
  await tui?.kill();
  tui = undefined;
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Marked {
  pid: number;
  /** The job tag, or null for Pi itself (and its spawner). */
  tag: string | null;
}

/** Live processes that carry `mark` (zombies have no environment left and are not listed). */
function marked(mark: string): Marked[] {
  const found: Marked[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${entry}/environ`, "latin1");
    } catch {
      continue;
    }
    const vars = environ.split("\0");
    if (!vars.includes(`${MARK}=${mark}`)) continue;
    const tag = vars.find((v) => v.startsWith(`${TAG_VARIABLE}=`));
    found.push({ pid: Number(entry), tag: tag === undefined ? null : tag.slice(TAG_VARIABLE.length + 1) });
  }
  return found;
}

const jobsOf = (mark: string) => marked(mark).filter((process) => process.tag !== null);

/** Kills whatever of a mark is left when a test fails half-way. */
function sweep(mark: string): void {
  for (const { pid } of marked(mark)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone.
    }
  }
}

function commandLineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0").join(" ");
  } catch {
    return "";
  }
}

function newMark(): string {
  const mark = randomBytes(6).toString("hex");
  cleanups.push(() => sweep(mark));
  return mark;
}

async function rpcWith(mark: string, options: Parameters<typeof startRpc>[0]): Promise<RpcSession> {
  const rpc = await startRpc({ ...options, env: { ...options?.env, [MARK]: mark } });
  cleanups.push(() => rpc.close(5000).catch(() => undefined));
  return rpc;
}

describe.runIf(linux)("nothing outlives Pi", () => {
  it("closing the terminal (tmux kill-session) leaves no job running", async () => {
    const mark = newMark();
    tui = await startTui({
      extensions: ["index.ts", "demo/extension.ts"],
      args: ["--model", "pi-jobs-demo/scripted-tour", "--metrics-no-footer"],
      env: { [MARK]: mark },
    });
    const t = tui;
    // A first Pi start on a busy machine can take a while.
    await t.waitForPane(/scripted-tour/, 60_000);
    await t.type("background");
    await t.waitForPane(/^background\s*$/m);
    await t.sendKeys("Enter");
    // The demo's two long jobs: a monitor and a shell loop.
    await pollUntil(() => new Set(jobsOf(mark).map((process) => process.tag)).size >= 2, { timeoutMs: 60_000, what: "both demo jobs running" });
    await new Promise<void>((resolve, reject) =>
      execFile("tmux", ["-L", t.socket, "kill-session", "-t", t.target], (error) => (error ? reject(error) : resolve())),
    );
    await pollUntil(() => marked(mark).length === 0, { timeoutMs: 30_000, what: "Pi and every job process gone" });
  });

  it("another extension's process.exit() leaves no job running, not even one that left its group", async () => {
    const mark = newMark();
    const rpc = await rpcWith(mark, {
      extensions: ["index.ts", "tests/fixtures/exit-extension.ts"],
      steps: [
        { toolCalls: [{ name: "exec_command", arguments: { cmd: "setsid sleep 300 & sleep 300", yield_time_ms: 250 } }] },
        { text: "started" },
      ],
    });
    await rpc.prompt("go");
    await rpc.waitForSettled(1, 60_000);
    // The shell, its sleep and the sleep in a session of its own.
    await pollUntil(() => jobsOf(mark).length >= 3, { timeoutMs: 30_000, what: "the job's three processes" });
    rpc.send({ type: "prompt", message: "/exit-now" });
    await pollUntil(() => marked(mark).length === 0, { timeoutMs: 30_000, what: "Pi and every job process gone" });
  });

  it("a session cleans up after a Pi killed with SIGKILL, says so once, and leaves a live session's job alone", async () => {
    const root = makeTempDir("crash");
    cleanups.push(() => removeDir(root));
    const env = { TMPDIR: root };
    const crashed = newMark();
    const server = `node -e "require('http').createServer().listen(0); setInterval(() => {}, 1e6)"`;
    const a = await rpcWith(crashed, {
      env,
      steps: [
        {
          toolCalls: [
            { name: "exec_command", arguments: { cmd: server, yield_time_ms: 250 } },
            // A PTY job survives its terminal's hangup only if it ignores SIGHUP, as a daemonizing server does.
            { name: "exec_command", arguments: { cmd: "trap '' HUP; sleep 300", tty: true, yield_time_ms: 250 } },
          ],
        },
        { text: "started" },
      ],
    });
    await a.prompt("go");
    await a.waitForSettled(1, 60_000);
    const live = newMark();
    const b = await rpcWith(live, {
      env,
      steps: [{ toolCalls: [{ name: "exec_command", arguments: { cmd: "sleep 300", yield_time_ms: 250 } }] }, { text: "started" }],
    });
    await b.prompt("go");
    await b.waitForSettled(1, 60_000);
    await pollUntil(() => new Set(jobsOf(crashed).map((process) => process.tag)).size === 2, { timeoutMs: 30_000, what: "both jobs of the crashing Pi" });
    await pollUntil(() => jobsOf(live).length >= 1, { timeoutMs: 30_000, what: "the live session's job" });

    // Pi and its spawner carry the mark but no job's tag; the spawner ends by itself once Pi is gone.
    const pi = marked(crashed).filter((process) => process.tag === null && !commandLineOf(process.pid).includes("spawner"));
    expect(pi).toHaveLength(1);
    process.kill(pi[0]!.pid, "SIGKILL");
    await pollUntil(() => marked(crashed).every((process) => process.tag !== null), { timeoutMs: 10_000, what: "the Pi to die" });
    // The premise: without a cleanup both jobs would live on.
    expect(new Set(jobsOf(crashed).map((process) => process.tag)).size).toBe(2);

    const c = await rpcWith(newMark(), { env });
    const notice = await c.waitFor((record) => record.type === "extension_ui_request" && record.method === "notify", 30_000);
    expect(String(notice.message)).toMatch(/^pi-jobs: stopped \d+ process(es)? left by a Pi session that ended without shutdown: shell: /);
    expect(String(notice.message)).toContain("shell: node -e");
    expect(String(notice.message)).toContain("shell: trap '' HUP; sleep 300");
    expect(jobsOf(crashed)).toEqual([]);
    expect(jobsOf(live).length).toBeGreaterThanOrEqual(1);
    const notices = c.records.filter((record) => record.type === "extension_ui_request" && record.method === "notify");
    expect(notices).toHaveLength(1);
  });
});
