/**
 * The ways a real-tool workload (tests/fixtures/real-tools.ts) reaches the model, each on a real runtime and each
 * giving the model-facing text of its results, as the tools' `content` has it:
 *
 * - `exec_command`: run to its end on pipes, followed by blocking write_stdin reads should it outlast one call;
 * - `exec_command tty`: the same in a PTY;
 * - `monitor_start`: `completion: "exit"` and a result pattern the run never prints, so it ends as a failure or
 *   result_missing; the direct report;
 * - `wait_jobs`: started with exec_command in the background, then collected by one wait_jobs call.
 *
 * Shared by tests/integration/real-tools.test.ts and bench/real-tools.ts.
 */
import type { SupervisedRuntime } from "../../host/runtime/runtime.ts";
import { validateMonitorStart } from "../../host/monitor/schemas.ts";
import { processResultText } from "../../host/shell/result-text.ts";
import { waitJobsText } from "../../host/wait/result-text.ts";
import { commandLine, workdir, type RealToolWorkload } from "../fixtures/real-tools.ts";
import { waitingJobs, type WaitingJobs } from "./waiting-jobs.ts";

export type ToolPath = "exec_command" | "exec_command tty" | "monitor_start" | "wait_jobs";
export const TOOL_PATHS: readonly ToolPath[] = ["exec_command", "monitor_start", "wait_jobs", "exec_command tty"];

export interface PathRun {
  /** Everything the model read, the results' texts in order. */
  text: string;
  /** The exit code the results give (null on a signal or when none is given). */
  exitCode: number | null;
}

/** A never-printed result pattern: the monitor has to report the run without the result it was told to expect. */
export const NEVER = "^__NEVER__$";
/** Long enough for any workload on a busy 2-core machine; the runs take seconds. */
const DEADLINE_MS = 300_000;

export interface RealToolPaths {
  jobs: WaitingJobs;
  run(path: ToolPath, w: RealToolWorkload): Promise<PathRun>;
  close(): Promise<void>;
}

export function realToolPaths(runtime: SupervisedRuntime, root: string): RealToolPaths {
  const jobs = waitingJobs(runtime);
  let calls = 0;
  const call = (cwd: string) => ({ toolCallId: `real-tools-${(calls += 1)}`, cwd });

  async function exec(w: RealToolWorkload, tty: boolean): Promise<PathRun> {
    const cwd = workdir(root, w);
    const texts: string[] = [];
    let r = await jobs.shell.service.exec({ cmd: commandLine(w), tty, on_exit: "none", yield_time_ms: 30_000 }, call(cwd));
    texts.push(processResultText(r));
    const deadline = Date.now() + DEADLINE_MS;
    // A busy machine may need more than one call's wait: the model would go on reading with write_stdin.
    while ((r.running || r.status === "starting") && r.session_id !== undefined && Date.now() < deadline) {
      r = await jobs.shell.service.writeStdin({ session_id: r.session_id, yield_time_ms: 30_000 }, call(cwd));
      texts.push(processResultText(r));
    }
    if (r.running) throw new Error(`${w.name}: still running after ${DEADLINE_MS} ms`);
    return { text: texts.join("\n"), exitCode: r.exit_code ?? null };
  }

  async function monitor(w: RealToolWorkload): Promise<PathRun> {
    const request = validateMonitorStart({ command: commandLine(w), result_pattern: NEVER, completion: "exit", timeout_ms: DEADLINE_MS, description: w.cwd });
    if (!request.ok) throw new Error(request.error);
    const record = jobs.monitors.start(request.value, { cwd: workdir(root, w), delivery: "direct" });
    const final = await jobs.monitors.settle(record);
    return { text: final.report, exitCode: final.facts.outcome.exitCode };
  }

  async function waitJobs(w: RealToolWorkload): Promise<PathRun> {
    const cwd = workdir(root, w);
    // The pause keeps the job running past exec_command's shortest wait however fast the tool is: it is collected
    // by wait_jobs, not by its start. It prints nothing.
    const started = await jobs.shell.service.exec({ cmd: `sleep 1; ${commandLine(w)}`, on_exit: "none", yield_time_ms: 250 }, call(cwd));
    if (started.session_id === undefined) throw new Error(`${w.name}: exec_command answered ${started.status}; the job must still run`);
    const result = await jobs.wait.wait({ ids: [String(started.session_id)], timeout_ms: DEADLINE_MS }, call(cwd));
    const line = result.jobs[0];
    if (result.wait_status !== "all_ended" || line === undefined) throw new Error(`${w.name}: wait_jobs ended ${result.wait_status}`);
    // The start's own text is what the model read first; it is part of what this path costs.
    return { text: `${processResultText(started)}\n${waitJobsText(result)}`, exitCode: line.exit_code ?? null };
  }

  return {
    jobs,
    run(path, w) {
      if (path === "monitor_start") return monitor(w);
      if (path === "wait_jobs") return waitJobs(w);
      return exec(w, path === "exec_command tty");
    },
    close: () => jobs.close(),
  };
}
