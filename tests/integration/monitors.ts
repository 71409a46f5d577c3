/** Monitors on a real runtime for the integration tests, started and settled the way the monitor tools do it. */
import { validateMonitorStart } from "../../host/monitor/schemas.ts";
import { createMonitorService, type FinalReport, type MonitorRecord, type MonitorService } from "../../host/monitor/service.ts";
import { ResultLedger } from "../../host/delivery/ledger.ts";
import type { MonitorMessage } from "../../host/delivery/results.ts";
import { DeliveryScheduler } from "../../host/delivery/scheduler.ts";
import type { SupervisedRuntime } from "../../host/runtime/runtime.ts";

/** The monitor service on a runtime, driven the way the monitor tools drive it. */
export interface Monitors {
  service: MonitorService;
  /** The asynchronous deliveries so far, in order. */
  deliveries: MonitorMessage[];
  /** Starts a monitor in `cwd` from tool-style arguments, as monitor_start would. */
  start(args: Record<string, unknown>, delivery?: "direct" | "async"): MonitorRecord;
  /** Starts one and waits for its final report. */
  run(args: Record<string, unknown>, delivery?: "direct" | "async"): Promise<FinalReport & { record: MonitorRecord }>;
}

export function monitorsOn(runtime: SupervisedRuntime, cwd: string): Monitors {
  const deliveries: MonitorMessage[] = [];
  const ledger = new ResultLedger();
  const scheduler = new DeliveryScheduler({
    ledger: () => ledger,
    shellWake: () => {
      throw new Error("no shell jobs here");
    },
    monitor: (message) => void deliveries.push(message),
    stillStuck: () => false,
  });
  scheduler.start();
  const service = createMonitorService(ledger);
  service.bind({ runtime: () => runtime, due: () => scheduler.schedule() });
  const start: Monitors["start"] = (args, delivery = "direct") => {
    const verdict = validateMonitorStart(args);
    if (!verdict.ok) throw new Error(verdict.error);
    return service.start(verdict.value, { cwd, delivery });
  };
  const run: Monitors["run"] = async (args, delivery) => {
    const record = start(args, delivery);
    return { ...(await service.settle(record)), record };
  };
  return { service, deliveries, start, run };
}
