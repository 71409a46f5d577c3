/**
 * The portable process table (`ps` and `lsof`, shared/process-table/ps-table.ts) as macOS runs it, seen on Linux with
 * `PI_JOBS_PROCESS_TABLE=ps`: this file runs only in the vitest project that forces it (vitest.config.ts), beside the
 * reruns of the features' own integration tests there. It checks what those cannot: that the runtime then opens no
 * file of a process under `/proc` (a real trace of one job's whole life), and that the jobs of a Pi killed with SIGKILL
 * are stopped by the next session.
 */
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { cleanUpAfterCrashes } from "../../host/safety/crash-cleanup.ts";
import { chooseTable, processTable } from "../../shared/process-table/index.ts";
import { killLeftovers, waitFor } from "./helpers.ts";

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
const leftovers: number[] = [];
afterEach(() => killLeftovers(leftovers));

describe("the backend", () => {
  it("is the portable one, as the switch asks", () => {
    expect(process.env.PI_JOBS_PROCESS_TABLE).toBe("ps");
    expect(processTable().kind).toBe("ps");
    expect(chooseTable({})).toBe("proc");
    expect(chooseTable({ PI_JOBS_PROCESS_TABLE: "ps" })).toBe("ps");
    expect(chooseTable({ PI_JOBS_PROCESS_TABLE: "proc" })).toBe("proc");
  });
});

/**
 * The files of another process (or of one of this process's threads) under `/proc`, the socket tables, and the
 * kernel's pid counters: what the /proc backend reads. Node itself reads `/proc/self/cgroup` and `/proc/self/maps` at
 * start (its memory limits, V8's stack), and `/proc/meminfo` and `/proc/loadavg` for `os`: none of them is the table's.
 */
const TABLE_FILE = /^\/proc\/(?:\d+\/|thread-self|self\/(?!cgroup"|maps")|net\/|sys\/kernel\/)/;

/** The `/proc` files the traced process's own threads opened: not those of the programs it started (ps, lsof, jobs). */
function tableOpens(trace: string): string[] {
  const lines = trace.split("\n");
  const root = lines[0]?.split(" ")[0];
  const execed = new Set(lines.filter((line) => line.includes(" execve(")).map((line) => line.split(" ")[0]));
  const opened: string[] = [];
  for (const line of lines) {
    const pid = line.split(" ")[0];
    if (pid !== root && execed.has(pid)) continue;
    const path = /open(?:at)?\((?:AT_FDCWD, )?"([^"]+)"/.exec(line)?.[1];
    if (path !== undefined && TABLE_FILE.test(`${path}"`)) opened.push(path);
  }
  return opened;
}

function traced(env: NodeJS.ProcessEnv): { result: Record<string, unknown>; opened: string[] } {
  const dir = join(process.env.TMPDIR ?? "/tmp", `trace-${process.pid}-${Date.now()}`);
  const output = `${dir}.trace`;
  const run = spawnSync(
    "strace",
    ["-f", "--seccomp-bpf", "-qq", "-e", "trace=open,openat,execve", "-o", output, process.execPath, fixture("one-job-life.ts")],
    { env, encoding: "utf8", timeout: 60_000 },
  );
  expect(run.status, run.stderr).toBe(0);
  const trace = readFileSync(output, "utf8");
  rmSync(output, { force: true });
  return { result: JSON.parse(run.stdout.trim().split("\n").at(-1)!) as Record<string, unknown>, opened: tableOpens(trace) };
}

const straceRuns = spawnSync("strace", ["-f", "-qq", "-e", "trace=openat", "-o", "/dev/null", "true"]).status === 0;

describe.runIf(straceRuns)("one job's life, traced", () => {
  it("opens no file of a process under /proc with the portable table, and all of it works", () => {
    const { result, opened } = traced({ ...process.env, PI_JOBS_PROCESS_TABLE: "ps" });
    expect(opened).toEqual([]);
    // Ready by its own process's port, its tree sampled (the server and the escapee), its port listed, and the
    // descendant that left the group stopped before the stop said so.
    expect(result).toMatchObject({ ready: "ready", usage: { processes: 2 }, listening: [result.port], cleanup: "confirmed" });
  }, 90_000);

  it("the same trace sees the /proc backend's reads (so the check above can fail)", () => {
    const env = { ...process.env };
    delete env.PI_JOBS_PROCESS_TABLE;
    const { result, opened } = traced(env);
    expect(opened.some((path) => /^\/proc\/\d+\/environ$/.test(path))).toBe(true);
    expect(opened.some((path) => path.startsWith("/proc/net/tcp"))).toBe(true);
    expect(result).toMatchObject({ ready: "ready", cleanup: "confirmed" });
  }, 90_000);
});

describe("a Pi killed with SIGKILL", () => {
  it("leaves jobs that the next session's cleanup stops, the one that left its group too", async () => {
    const child = spawn(process.execPath, [fixture("exit-net-child.ts"), "hold"], { stdio: ["ignore", "pipe", "inherit"] });
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    const [runtimeId, logDir] = await waitFor(() => {
      const lines = stdout.split("\n").filter((line) => line !== "");
      return lines.length >= 2 ? lines : null;
    }, 30_000, "the runtime's id and its log directory");
    const running = (await processTable().processesOfRuntimes([runtimeId!])) ?? [];
    leftovers.push(...running.map((process) => process.pid));
    // The shell, its sleep, and the sleep that left the group with setsid.
    expect(running.length).toBeGreaterThanOrEqual(3);
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;

    const report = await cleanUpAfterCrashes({ root: dirname(logDir!), graceMs: 500 });
    expect(report).toMatchObject({ unconfirmed: 0, labels: ["escaping sleep"] });
    expect(report.stopped).toBeGreaterThanOrEqual(3);
    expect(await processTable().processesOfRuntimes([runtimeId!])).toEqual([]);
  }, 60_000);
});

describe("ps and lsof answer for processes, not guesses", () => {
  it("a process's own listening port, and nothing for a process that listens on none", async () => {
    const server = spawn(process.execPath, ["-e", "require('net').createServer().listen(0, '127.0.0.1', function () { console.log(this.address().port) })"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    leftovers.push(server.pid!);
    const port = await new Promise<number>((resolve) => server.stdout.once("data", (chunk: Buffer) => resolve(Number(chunk.toString().trim()))));
    expect(await processTable().listening([server.pid!])).toEqual([port]);
    expect(await processTable().listening([process.pid])).toEqual([]);
  });
});
