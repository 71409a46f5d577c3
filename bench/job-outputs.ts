/**
 * What the model receives for whole jobs, run for real: each workload as a monitor (its direct report, built from the
 * outcome the monitor's actor produced) and through exec_command (the tool result's text, the command run to its end
 * in one call). For `npm run tokens` (bench/tokens.ts); `node bench/job-outputs.ts` prints the texts' token counts as
 * JSON, which is how the figures before folding were taken from the commit before it.
 */
import { withoutMatched } from "../host/evidence-text.ts";
import { tmpdir } from "node:os";
import { pathToFileURL } from "node:url";
import { buildReport } from "../host/monitor/report.ts";
import { processResultText } from "../host/shell/result-text.ts";
import { ShellService } from "../host/shell/service.ts";
import { createShellState } from "../host/shell/state.ts";
import type { MonitorContract } from "../mailbox/monitor.ts";
import { closeRuntime, installedRuntime, monitorRequest } from "../tests/fixtures/jobs.ts";
import { tokens } from "./token-count.ts";

export interface JobWorkload {
  name: string;
  command: string;
  /** Null when the workload is only run through exec_command. */
  contract: MonitorContract | null;
}

const BUILD = `i=1; while [ $i -le 2000 ]; do echo "[build] step $i/2000: compiled src/module_$i.ts in $(( (i * 37) % 90 + 3 )) ms"; i=$((i+1)); done; echo '__RESULT__ {"ok":true,"modules":2000,"warnings":0}'`;
// Unique lines, none shaped like an error: what a verbose checker prints before it fails.
const DIAGNOSTICS = `seq 1 10000 | awk '{ printf "note[%05d]: src/pkg_%d/module_%d.ts:%d:%d unused import dep_%d\\n", $1, $1 % 97, ($1 * 7919) % 10007, ($1 * 31) % 400 + 1, ($1 * 17) % 80 + 1, ($1 * 131) % 1000 }'; echo __FAILED__; exit 1`;
const STEPS = `i=1; while [ $i -le 50 ]; do echo "step $i: ok"; i=$((i+1)); done`;
const PLANTED = `seq 1 20000 | awk '{ if ($1 == 10000) print "ERROR: disk quota exceeded"; else print "[worker] processed batch " $1 " in " ($1 * 7919) % 1000 " ms" }'`;

export const JOB_WORKLOADS: JobWorkload[] = [
  { name: "2,000 noisy build lines, then `__RESULT__ {json}`", command: BUILD, contract: { resultPattern: "^__RESULT__ (?<json>\\{.*\\})$", failurePattern: null, completion: "match" } },
  { name: "10,000 unique diagnostics, then `__FAILED__`, exit 1", command: DIAGNOSTICS, contract: { resultPattern: "__DONE__", failurePattern: "__FAILED__", completion: "match" } },
  { name: "50 lines `step N: ok`, exit 0, no sentinel (result_missing)", command: STEPS, contract: { resultPattern: "__DONE__", failurePattern: null, completion: "match" } },
  { name: "`ERROR: disk quota exceeded` planted in the middle of 20,000 noise lines", command: PLANTED, contract: null },
];

export interface JobOutput {
  name: string;
  monitor: string | null;
  exec: string;
}

export async function jobOutputs(): Promise<JobOutput[]> {
  const runtime = installedRuntime();
  const service = new ShellService(createShellState(), { runtime: () => runtime, env: () => ({}) });
  try {
    const out: JobOutput[] = [];
    for (const [index, workload] of JOB_WORKLOADS.entries()) {
      let monitor: string | null = null;
      if (workload.contract !== null) {
        const timeoutMs = 120_000;
        const result = await runtime.start(monitorRequest(workload.command, { contract: workload.contract, timeoutMs })).done;
        if (!result.monitor) throw new Error(`${workload.name}: the monitor ended without an outcome (${result.cause})`);
        monitor = buildReport({
          monitorId: `monitor_${index + 1}`,
          description: workload.name,
          outcome: result.monitor,
          evidence: withoutMatched(result.evidence, result.monitor.matched),
          logPath: result.log.path,
          elapsedMs: result.elapsedMs,
          timeoutMs,
          compact: false,
          direct: true,
          expected: workload.contract.resultPattern,
          limit: null,
        });
      }
      const exec = await service.exec({ cmd: workload.command, yield_time_ms: 30_000 }, { toolCallId: `tokens-${index}`, cwd: tmpdir() });
      if (exec.running) throw new Error(`${workload.name}: still running after 30 s`);
      out.push({ name: workload.name, monitor, exec: processResultText(exec) });
    }
    return out;
  } finally {
    await service.stopAll();
    await closeRuntime(runtime);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const outputs = await jobOutputs();
  const counted = outputs.map((o) => ({ name: o.name, monitor: o.monitor === null ? null : tokens(o.monitor), exec: tokens(o.exec), execChars: o.exec.length }));
  process.stdout.write(`${JSON.stringify(counted, null, 2)}\n`);
}
