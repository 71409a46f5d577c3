/**
 * `npm run test:stress`: the whole suite, several times in a row on an idle machine and several times while other
 * CPU-heavy work fills every core, to find tests that fail by timing alone. A suite that passes once proves little;
 * one that passes N idle and M loaded runs is one a submission can rely on.
 *
 *   npm run test:stress                      # 10 idle runs, then 3 loaded runs
 *   npm run test:stress -- --idle 2 --loaded 1 [vitest filters…]
 *
 * Each run's output goes to a file in a temporary folder; the summary names every failed test and its run.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

interface Options {
  idle: number;
  loaded: number;
  filters: string[];
}

function parseArgs(argv: string[]): Options {
  const options: Options = { idle: 10, loaded: 3, filters: [] };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    if (arg === "--idle" || arg === "--loaded") {
      const value = Number(argv[i + 1]);
      if (!Number.isInteger(value) || value < 0) throw new Error(`${arg} takes a whole number of runs, got ${JSON.stringify(argv[i + 1])}`);
      options[arg === "--idle" ? "idle" : "loaded"] = value;
      i += 1;
    } else {
      options.filters.push(arg);
    }
  }
  return options;
}

/** One busy loop per core at normal priority, like another build or test run competing with this one. */
function loadEveryCore(): ChildProcess[] {
  return Array.from({ length: availableParallelism() }, () =>
    spawn("sh", ["-c", "exec yes > /dev/null"], { stdio: "ignore" }),
  );
}

interface RunResult {
  label: string;
  ok: boolean;
  seconds: number;
  failed: string[];
  logFile: string;
}

function runSuite(label: string, filters: string[], logDir: string): Promise<RunResult> {
  const started = performance.now();
  const logFile = join(logDir, `${label}.log`);
  return new Promise((resolve) => {
    const child = spawn("npx", ["vitest", "run", "--reporter=verbose", ...filters], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, FORCE_COLOR: "0", NO_COLOR: "1" },
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("close", (code) => {
      writeFileSync(logFile, output);
      // vitest's verbose reporter marks a failed test with ×; a file that failed to load shows as FAIL.
      // An error outside any test (a crashed test process, say) fails the run without a failed test: name it too.
      // Colours can survive FORCE_COLOR=0 (vitest decides per stream), so strip them before matching.
      const failed = output
        .replace(/\x1b\[[0-9;]*m/g, "")
        .split("\n")
        .filter((line) => /^\s*(×|FAIL)\s/.test(line) || /Worker exited unexpectedly|FATAL ERROR|Unhandled (Error|Rejection)/.test(line))
        .map((line) => line.trim());
      resolve({ label, ok: code === 0, seconds: (performance.now() - started) / 1000, failed: [...new Set(failed)], logFile });
    });
  });
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const logDir = mkdtempSync(join(tmpdir(), "pi-jobs-stress-"));
  const results: RunResult[] = [];
  const report = (result: RunResult): void => {
    results.push(result);
    const verdict = result.ok ? "passed" : `FAILED (${result.failed.length} failure line(s))`;
    console.log(`${result.label}: ${verdict} in ${result.seconds.toFixed(0)} s — ${result.logFile}`);
    for (const line of result.failed) console.log(`    ${line}`);
  };
  for (let run = 1; run <= options.idle; run += 1) report(await runSuite(`idle-${run}`, options.filters, logDir));
  for (let run = 1; run <= options.loaded; run += 1) {
    const load = loadEveryCore();
    try {
      report(await runSuite(`loaded-${run}`, options.filters, logDir));
    } finally {
      for (const child of load) child.kill("SIGKILL");
    }
  }
  const passed = results.filter((result) => result.ok).length;
  console.log(`\nstress: ${passed} of ${results.length} suite runs passed (${options.idle} idle, ${options.loaded} with every core busy)`);
  process.exitCode = passed === results.length ? 0 : 1;
}

await main();
