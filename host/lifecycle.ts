/**
 * The runtime's life inside one extension instance: created (or adopted after /reload) at session_start, warmed,
 * and at session_shutdown either parked for the next instance (reload) or shut down completely, so that when the
 * handler returns every process group is gone and every worker has ended.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { adopt, park, type Parkable } from "./handover.ts";
import { createJobRuntime, type RuntimeOptions, type SupervisedRuntime } from "./runtime.ts";

export interface Lifecycle {
  /** The runtime of the current session (created on first use). */
  runtime(): SupervisedRuntime;
  /** State another part parked under `key` before /reload, available from session_start on. */
  adopted<T extends Parkable>(key: string): T | undefined;
  /** Registers a part that parks its own state on /reload (e.g. the shell-job registry). */
  onPark(key: string, take: () => Parkable): void;
}

interface ParkedRuntime extends Parkable {
  runtime: SupervisedRuntime;
}

export function installLifecycle(pi: ExtensionAPI, options: RuntimeOptions = {}): Lifecycle {
  let runtime: SupervisedRuntime | null = null;
  let adoptedState: Record<string, Parkable> = {};
  const parkers = new Map<string, () => Parkable>();

  const current = (): SupervisedRuntime => (runtime ??= createJobRuntime(options));

  pi.on("session_start", () => {
    adoptedState = adopt() ?? {};
    const parked = adoptedState.runtime as ParkedRuntime | undefined;
    if (parked) runtime = parked.runtime;
    current().warmUp();
  });

  pi.on("session_shutdown", async (event) => {
    const owned = runtime;
    runtime = null;
    if (event.reason === "reload" && owned) {
      const parkedRuntime: ParkedRuntime = { runtime: owned, abandon: () => owned.shutdown() };
      const state: Record<string, Parkable> = { runtime: parkedRuntime };
      for (const [key, take] of parkers) state[key] = take();
      park(state);
      return;
    }
    // Each part ends its own jobs first (a monitor stopped this way delivers nothing into a closing session), then
    // the runtime makes sure every group is gone and every worker has ended.
    for (const take of parkers.values()) await take().abandon();
    await owned?.shutdown();
  });

  return {
    runtime: current,
    adopted: <T extends Parkable>(key: string) => adoptedState[key] as T | undefined,
    onPark: (key, take) => void parkers.set(key, take),
  };
}
