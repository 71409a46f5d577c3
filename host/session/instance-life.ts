/**
 * The runtime's life inside one extension instance: created (or adopted after /reload or a session switch) at
 * session_start, warmed, and at session_shutdown either parked for the next instance (reload, /new, /resume, /fork:
 * the same Pi process goes on) or shut down completely (quit), so that when the handler returns every process group
 * is gone and every worker has ended.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { cleanUpInBackground } from "../safety/crash-cleanup.ts";
import { adopt, park, type Parkable } from "./handover.ts";
import { createJobRuntime, type RuntimeOptions, type SupervisedRuntime } from "../runtime/runtime.ts";

export interface InstanceLife {
  /** The runtime of the current session (created on first use). */
  runtime(): SupervisedRuntime;
  /** State another part parked under `key` before /reload or a session switch, available from session_start on. */
  adopted<T extends Parkable>(key: string): T | undefined;
  /** Registers a part that parks its own state on /reload and session switches (e.g. the shell-job registry). */
  onPark(key: string, take: () => Parkable): void;
}

export type ShutdownReason = "quit" | "reload" | "new" | "resume" | "fork";

/**
 * Whether the jobs go on after a session_shutdown of this reason. Every reason but quit is followed by a session_start
 * in the same Pi process (the same session after /reload, another one after /new, /resume and /fork): the user changed
 * what the model sees, not what runs, so the dev server and the watcher the model started keep running.
 */
export function carriesJobs(reason: ShutdownReason): boolean {
  return reason !== "quit";
}

interface ParkedRuntime extends Parkable {
  runtime: SupervisedRuntime;
}

export function installInstanceLife(pi: ExtensionAPI, options: RuntimeOptions = {}): InstanceLife {
  let runtime: SupervisedRuntime | null = null;
  let adoptedState: Record<string, Parkable> = {};
  const parkers = new Map<string, () => Parkable>();

  const current = (): SupervisedRuntime => (runtime ??= createJobRuntime(options));

  pi.on("session_start", (_event, ctx) => {
    adoptedState = adopt() ?? {};
    const parked = adoptedState.runtime as ParkedRuntime | undefined;
    if (parked) runtime = parked.runtime;
    current().warmUp();
    // Processes left by a Pi that died without a shutdown (host/safety/crash-cleanup.ts). Not after /reload: the same Pi
    // process looked at its start (the same holds after a session switch).
    if (!parked) void cleanUpInBackground((line) => ctx.ui.notify(line, "warning"));
  });

  pi.on("session_shutdown", async (event) => {
    const owned = runtime;
    runtime = null;
    if (carriesJobs(event.reason) && owned) {
      const parkedRuntime: ParkedRuntime = { runtime: owned, abandon: () => owned.shutdown() };
      const state: Record<string, Parkable> = { runtime: parkedRuntime };
      for (const [key, take] of parkers) state[key] = take();
      park(state);
      return;
    }
    // Each part marks its own jobs as ending with the session (a monitor stopped this way delivers nothing into a
    // closing session) and the runtime stops every job at once, bounded by the grace plus a second, then ends the
    // workers. All in parallel: a quit must not wait for one part after another.
    const parts = [...parkers.values()].map((take) => take().abandon());
    await Promise.all([...parts, owned?.shutdown()]);
  });

  return {
    runtime: current,
    adopted: <T extends Parkable>(key: string) => adoptedState[key] as T | undefined,
    onPark: (key, take) => void parkers.set(key, take),
  };
}
