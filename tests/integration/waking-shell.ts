/** A shell service on a real runtime with the delivery's scheduler, wired as the host wires them (host/install.ts). */
import { ResultLedger, type WakeTiming } from "../../host/delivery/ledger.ts";
import { DeliveryScheduler, type MonitorSender, type ShellWakeSender } from "../../host/delivery/scheduler.ts";
import type { SupervisedRuntime } from "../../host/runtime/runtime.ts";
import { stillStuck } from "../../host/shell/alerts.ts";
import { ShellService } from "../../host/shell/service.ts";
import { createShellState, type ShellState } from "../../host/shell/state.ts";

export interface WakingShell {
  service: ShellService;
  wakes: DeliveryScheduler;
  /** Stops the wakes, then every job. */
  close(): Promise<void>;
}

/** The delivery's scheduler over the state's ledger, as host/delivery/install.ts makes it; monitor messages to `monitor`. */
export function schedulerOf(state: () => ShellState, send: ShellWakeSender, monitor: MonitorSender = () => {}): DeliveryScheduler {
  return new DeliveryScheduler({ ledger: () => state().ledger, shellWake: send, monitor, stillStuck: (alert) => stillStuck(state(), alert) });
}

/** Completions wake through `send`, batched by `wakeTiming`; stops give the process group 300 ms before SIGKILL. */
export function wakingShell(runtime: SupervisedRuntime, wakeTiming: WakeTiming, send: ShellWakeSender, monitor?: MonitorSender): WakingShell {
  const service = new ShellService(createShellState({ ledger: new ResultLedger(wakeTiming) }), { runtime: () => runtime, killGraceMs: 300 });
  const wakes = schedulerOf(() => service.state, send, monitor);
  service.state.onCompletion = () => wakes.schedule();
  wakes.start();
  return {
    service,
    wakes,
    async close() {
      wakes.stop();
      await service.stopAll();
    },
  };
}
