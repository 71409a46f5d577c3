/**
 * `npm start` (demo/start.ts) in a fresh copy of the checkout: it compiles the workers into dist/ because there is
 * none, and real Pi's threads then run that compiled code, not the TypeScript source; a second start finds dist/ up
 * to date and builds nothing. Answered by the scripted faux model, with the demo model off.
 */
import { spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { join, sep } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { copyCheckout } from "./harness/checkout-copy.ts";
import { preparePiRun } from "./harness/cli.ts";
import { inside, recordWorkerLoads } from "./harness/install.ts";
import { makeTempDir, NODE22, removeDir } from "./harness/paths.ts";

const RUN_TIMEOUT_MS = 120_000;
const BUNDLE = join("dist", "actors", "thread", "actor-thread.cjs");
/** What a compiled copy's threads load: it runs the bundle beside it (actors/thread/cached-entry.ts). */
const THREAD_ENTRY = "dist/actors/thread/cached-entry.cjs";

interface StartRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** pi-jobs' own files the worker threads loaded, relative to the copy. */
  workerFiles: string[];
}

/** `node demo/start.ts` of the copy at `root`, in print mode: one monitor, then the model echoes its report. */
async function npmStart(root: string): Promise<StartRun> {
  const dir = makeTempDir("npm-start");
  const loads = recordWorkerLoads(dir);
  const prepared = preparePiRun(
    {
      // start.ts loads the copy itself (`-e <copy>`); the run adds only the faux model.
      extensions: [],
      env: { ...loads.env, PI_JOBS_DEMO: "0" },
      steps: [
        { toolCalls: [{ name: "monitor_start", arguments: { command: "echo noise; echo READY 42", result_pattern: "^READY (?<n>\\d+)$" } }] },
        { text: "model saw: {{last}}" },
      ],
    },
    ["-p"],
    ["go"],
  );
  try {
    const child = spawn(NODE22, [join(root, "demo", "start.ts"), ...prepared.args], {
      cwd: prepared.cwd,
      env: prepared.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const deadline = setTimeout(() => process.kill(-(child.pid as number), "SIGKILL"), RUN_TIMEOUT_MS);
    const code = await new Promise<number | null>((resolve) => child.once("close", (exitCode) => resolve(exitCode)));
    clearTimeout(deadline);
    const workerFiles = loads.files().flatMap((file) => {
      const rel = inside(root, file);
      return rel === undefined || rel.startsWith(`node_modules${sep}`) ? [] : [rel.split(sep).join("/")];
    });
    return { code, stdout, stderr, workerFiles };
  } finally {
    removeDir(prepared.runDir);
    removeDir(dir);
  }
}

describe("npm start runs the compiled workers", () => {
  let dir: string;
  let root: string;

  beforeAll(() => {
    dir = makeTempDir("start-copy");
    root = copyCheckout(join(dir, "pi-jobs"));
  });

  afterAll(() => {
    if (dir !== undefined) removeDir(dir);
  });

  test("a checkout without dist/ is compiled first, and every worker file Pi's threads load is compiled", async () => {
    expect(existsSync(join(root, "dist"))).toBe(false);
    const run = await npmStart(root);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain("pi-jobs: compiling the workers into dist/");
    expect(run.stdout).toContain("model saw: Monitor:");
    expect(run.stdout).toContain("status=success");
    expect(run.workerFiles).toContain(THREAD_ENTRY);
    expect(run.workerFiles.filter((file) => !file.startsWith("dist/"))).toEqual([]);
  }, RUN_TIMEOUT_MS * 2);

  test("a second start finds dist/ up to date and builds nothing", async () => {
    const built = statSync(join(root, BUNDLE)).mtimeMs;
    const run = await npmStart(root);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain("compiling the workers");
    expect(statSync(join(root, BUNDLE)).mtimeMs).toBe(built);
    expect(run.workerFiles).toContain(THREAD_ENTRY);
  }, RUN_TIMEOUT_MS * 2);
});
