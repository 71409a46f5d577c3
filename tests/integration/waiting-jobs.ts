/**
 * A session's jobs as wait_jobs sees them, on a real runtime: the shell service with its wake scheduler (wakes
 * recorded in `shellWakes`), the monitor service bound to a host that records its deliveries (`monitorWakes`; while
 * `refuse` is set it refuses them, as Pi does between sessions), and wait_jobs over both.
 */
import { tmpdir } from "node:os";
import type { SupervisedRuntime } from "../../host/runtime/runtime.ts";
import { createMonitorService, type MonitorService } from "../../host/monitor/service.ts";
import type { CompletionInfo, MonitorMessage } from "../../host/delivery/results.ts";
import { validateMonitorStart } from "../../host/monitor/schemas.ts";
import type { CallContext } from "../../host/shell/service.ts";
import { WaitService } from "../../host/wait/service.ts";
import { wakingShell, type WakingShell } from "./waking-shell.ts";

export interface WaitingJobs {
  shell: WakingShell;
  monitors: MonitorService;
  wait: WaitService;
  shellWakes: CompletionInfo[][];
  monitorWakes: MonitorMessage[];
  refuse: { monitors: boolean };
  /** Starts a shell job that is still running when exec_command returns; its session_id. */
  exec(cmd: string, onExit?: "wake" | "none"): Promise<number>;
  /** Starts a monitor whose result is owed asynchronously (as after a monitor-only batch); its id. */
  monitor(command: string, resultPattern?: string): string;
  close(): Promise<void>;
}

export const direct = (id = "direct"): CallContext => ({ toolCallId: id, cwd: tmpdir() });

export function waitingJobs(runtime: SupervisedRuntime): WaitingJobs {
  const shellWakes: CompletionInfo[][] = [];
  const monitorWakes: MonitorMessage[] = [];
  const refuse = { monitors: false };
  const shell = wakingShell(
    runtime,
    { quietMs: 300, maxDelayMs: 1000 },
    (batch) => void shellWakes.push([...batch]),
    (message) => {
      if (refuse.monitors) throw new Error("no live session to deliver to");
      monitorWakes.push(message);
    },
  );
  // One ledger for both kinds, as in the host.
  const ledger = () => shell.service.state.ledger;
  const monitors = createMonitorService(ledger());
  monitors.bind({ runtime: () => runtime, due: () => shell.wakes.schedule() });
  const wait = new WaitService({ shell: () => shell.service, monitors: () => monitors, ledger, due: () => shell.wakes.schedule() });
  return {
    shell,
    monitors,
    wait,
    shellWakes,
    monitorWakes,
    refuse,
    async exec(cmd, onExit = "wake") {
      const r = await shell.service.exec({ cmd, on_exit: onExit, yield_time_ms: 250 }, direct(`exec-${cmd}`));
      if (r.session_id === undefined) throw new Error(`exec_command answered ${r.status} for ${cmd}: the job must still run`);
      return r.session_id;
    },
    monitor(command, resultPattern = "^DONE$") {
      const request = validateMonitorStart({ command, result_pattern: resultPattern, completion: "exit" });
      if (!request.ok) throw new Error(request.error);
      return monitors.start(request.value, { cwd: tmpdir(), delivery: "async" }).monitorId;
    },
    async close() {
      await monitors.stop(null, "session_shutdown");
      monitors.bind(null);
      await shell.close();
    },
  };
}
