/**
 * A compiled copy's actor threads share V8's code for their entry (actors/thread/cached-entry.ts): once a job has
 * started, the threads made after it compile the bundle from what that job's thread compiled, and run pipe and PTY
 * jobs from it; a cache V8 refuses is not used, and the jobs run as they do without one. The workers are compiled into
 * a copy of the checkout, as `npm start` compiles them.
 */
import { execFileSync } from "node:child_process";
import { statSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { claimCodeCache, createCodeCache, readCodeCache, writeCodeCache, type BundleIdentity } from "../../mailbox/code-cache.ts";
import type { SupervisedRuntime } from "../../host/runtime/runtime.ts";
import { copyCheckout } from "../e2e/harness/checkout-copy.ts";
import { makeTempDir, NODE22, removeDir } from "../e2e/harness/paths.ts";
import { runtimeFor, shellJob, waitFor } from "./helpers.ts";

let dir: string;
let entry: URL;
let bundle: BundleIdentity;
let runtime: SupervisedRuntime | null = null;

beforeAll(() => {
  dir = makeTempDir("code-cache");
  const root = copyCheckout(join(dir, "pi-jobs"));
  execFileSync(NODE22, [join(root, "scripts", "build.ts")], { stdio: "pipe", timeout: 120_000 });
  entry = pathToFileURL(join(root, "dist", "actors", "thread", "cached-entry.cjs"));
  const { size, mtimeMs } = statSync(join(root, "dist", "actors", "thread", "actor-thread.cjs"));
  bundle = { size, mtimeMs };
}, 150_000);

afterEach(async () => {
  await runtime?.shutdown();
  runtime = null;
});

afterAll(() => {
  if (dir !== undefined) removeDir(dir);
});

/** Three pipe jobs and a PTY job at once, on a runtime with one idle thread: at least three new threads are made. */
async function fourJobsAtOnce(started: SupervisedRuntime): Promise<void> {
  const jobs = [
    ...[1, 2, 3].map((n) => ({ job: started.start(shellJob(`echo pipe-${n}`)), says: `pipe-${n}` })),
    { job: started.start(shellJob("tty >/dev/null && echo pty-ok", { io: { kind: "pty", cols: 80, rows: 24 } })), says: "pty-ok" },
  ];
  for (const { job, says } of jobs) {
    expect(await job.done, says).toMatchObject({ cause: "exit", exitCode: 0 });
    const lines = (await job.readWindow()).lines.map((line) => line.text);
    expect(lines, says).toContain(says);
  }
}

describe("the code cache of compiled actor threads", () => {
  it("is left by the first job's thread, and the threads made after it compile from it", async () => {
    const cache = createCodeCache();
    runtime = runtimeFor({ warm: 1, actorEntry: entry, codeCache: cache });
    const first = runtime.start(shellJob("echo first"));
    expect(await first.done).toMatchObject({ cause: "exit", exitCode: 0 });
    await waitFor(() => readCodeCache(cache, bundle) !== undefined, 30_000, "the first job's thread to leave its code");
    await fourJobsAtOnce(runtime);
    expect(runtime.codeCacheUses()).toBeGreaterThan(0);
  }, 120_000);

  it("is not used when V8 refuses it, and the jobs run as without it", async () => {
    const cache = createCodeCache();
    // Bytes that name the right bundle but are no code V8 made.
    claimCodeCache(cache);
    writeCodeCache(cache, bundle, Uint8Array.from({ length: 4096 }, (_, i) => (i * 7) % 256));
    runtime = runtimeFor({ warm: 1, actorEntry: entry, codeCache: cache });
    await fourJobsAtOnce(runtime);
    expect(runtime.codeCacheUses()).toBe(0);
  }, 120_000);
});
