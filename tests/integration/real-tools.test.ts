/**
 * Every report carries its evidence: real tools (pytest, vitest, tsc, make with gcc, cargo, a Python service, a Java
 * server) run with planted failures through each way their result reaches the model — exec_command to its end,
 * monitor_start with a result the run never prints, exec_command in the background collected by wait_jobs, and a
 * PTY for the tools that colour their output. Each fact a developer needs (failing test ids, `file:line`, the
 * message, the summary line) must be in the model-facing text, and no escape sequence may be.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SupervisedRuntime } from "../../host/runtime/runtime.ts";
import { escapesIn, missingFacts, prepareWorkloads, REAL_TOOL_WORKLOADS, type RealToolWorkload } from "../fixtures/real-tools.ts";
import { runtimeFor } from "./helpers.ts";
import { realToolPaths, type RealToolPaths, type ToolPath } from "./real-tool-paths.ts";

let runtime: SupervisedRuntime;
let paths: RealToolPaths;
let root: string;

beforeAll(async () => {
  // Under the run's own temporary directory (tests/temporary-dir.ts), removed with it.
  root = mkdtempSync(join(tmpdir(), "real-tools-"));
  await prepareWorkloads(root);
  runtime = runtimeFor({ warm: 2 });
  paths = realToolPaths(runtime, root);
}, 300_000);

afterAll(async () => {
  await paths?.close();
  await runtime?.shutdown();
});

/** The paths each workload takes: a PTY only where the tool colours its output (or would in a terminal). */
const pathsFor = (w: RealToolWorkload): ToolPath[] =>
  w.coloured || w.cwd.startsWith("pytest") ? ["exec_command", "monitor_start", "wait_jobs", "exec_command tty"] : ["exec_command", "monitor_start", "wait_jobs"];

describe.each(REAL_TOOL_WORKLOADS.map((w) => [w.name, w] as const))("%s", (_name, w) => {
  it.each(pathsFor(w))(
    "%s: every fact, no escape sequence",
    async (path) => {
      const { text, exitCode } = await paths.run(path, w);
      // The run itself went as planted: otherwise a missing fact would say nothing about the report.
      expect(exitCode, `${path}: the tool's exit code`).toBe(w.expectExit);
      expect.soft(missingFacts(w, text), `${path}: facts missing from the model-facing text`).toEqual([]);
      expect.soft(escapesIn(text), `${path}: escape sequences in the model-facing text`).toEqual([]);
    },
    300_000,
  );
});
