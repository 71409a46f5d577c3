/** A shell service on a real runtime with its wake scheduler, wired as the shell tools wire them (host/shell/install.ts). */
import type { SupervisedRuntime } from "../../host/runtime/runtime.ts";
import { ShellService } from "../../host/shell/service.ts";
import { createShellState } from "../../host/shell/state.ts";
import { WakeScheduler, type WakeSender } from "../../host/shell/wake-delivery.ts";
import type { WakeTiming } from "../../host/shell/wake-ledger.ts";

export interface WakingShell {
  service: ShellService;
  wakes: WakeScheduler;
  /** Stops the wakes, then every job. */
  close(): Promise<void>;
}

/** Completions wake through `send`, batched by `wakeTiming`; stops give the process group 300 ms before SIGKILL. */
export function wakingShell(runtime: SupervisedRuntime, wakeTiming: WakeTiming, send: WakeSender): WakingShell {
  const service = new ShellService(createShellState({ wakeTiming }), { runtime: () => runtime, killGraceMs: 300 });
  const wakes = new WakeScheduler(() => service.state, send);
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
