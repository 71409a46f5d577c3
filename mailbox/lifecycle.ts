/**
 * One job's lifecycle: the one list of phases every layer speaks of (`Phase`), why a job is still starting
 * (`StartStage`), and the one table of how each side's view maps to them (`LIFECYCLE`). Every other word for a job's
 * phase or status is a subset of `Phase` or a spec's word beside it, never a type of its own. Plain data and small
 * pure functions with no imports, since worker threads load it.
 *
 *   phase       the actor                                   the host's JobState phase         start stage
 *   starting    preparing; the spawn is not claimed         starting                          the pool's (queued, booting)
 *   spawning    inside spawn(): a pid may be unpublished    starting                          forking
 *   running     the process exists; pid and pgid published  running                           none
 *   stopping    stopping the group, for whatever cause      running                           none
 *   ended       finished; its exit message is on its way    running, `ended` with the result  none
 *   cancelled   (the host's: it won the spawn handshake)    starting (settled at once)        none
 *
 * The shared cell stores the phase (mailbox/cell.ts), and its spawn handshake is the race between `starting` →
 * `spawning` (the actor) and `starting` → `cancelled` (the host). The actor's state is discriminated by its phase
 * (actors/job/state.ts); its own `ended` begins as it starts to finish, while the cell says `ended` only as the exit
 * message goes out, which the supervisor relies on (host/runtime/supervisor.ts). The host reads the cell and keeps the
 * coarser phase of its `JobState` (host/runtime/api.ts): whether the process exists, and whether the terminal result
 * is in. The tools and the console say `starting` or `running` from that phase, the shell side `stopping` once
 * someone asked for a stop (`liveStatus`), and once the job has ended the spec's word for how it ended: the shell
 * tools' `exited`, `timed_out`… (`ProcessStatus`, host/shell/supervision.ts), a monitor's `success`, `timeout`… (the
 * monitor spec's `MonitorStatus`, mailbox/monitor.ts).
 */

/** Every phase of a job, in the order a job moves through them; the cell stores a phase as its index here. */
export const PHASES = ["starting", "spawning", "running", "stopping", "ended", "cancelled"] as const;
export type Phase = (typeof PHASES)[number];

/**
 * Why a job is still `starting`: `waiting_for_thread` while its start waits in the pool (no loaded thread is free and
 * as many threads as may boot at once are booting, host/runtime/pool.ts); `booting` once the pool has handed it to a
 * thread that has not claimed the spawn yet (the thread is still loading the actor's modules, or the actor is
 * preparing); `forking` while the actor is inside spawn (`spawning`). A burst's starts move through them in this
 * order; the tools and the console show them so that a slow start says where it is.
 */
export type StartStage = "waiting_for_thread" | "booting" | "forking";

/** One row of the table: how one phase looks from the host. */
export interface PhaseView {
  /** The host's phase while the terminal result is not in: `running` exactly when the process exists (or existed). */
  readonly host: Extract<Phase, "starting" | "running">;
  /** Where a start is: the pool knows (its queue, or a thread that boots), the actor is forking, or it is past it. */
  readonly start: "pool" | "forking" | null;
}

export const LIFECYCLE: { readonly [P in Phase]: PhaseView } = {
  starting: { host: "starting", start: "pool" },
  spawning: { host: "starting", start: "forking" },
  running: { host: "running", start: null },
  stopping: { host: "running", start: null },
  // The actor has finished and its exit message is on its way: the process existed, and the result decides the rest.
  ended: { host: "running", start: null },
  // The host cancelled the job before its spawn and settled it at once, so it never reads this while the job lives.
  cancelled: { host: "starting", start: null },
};

/** The number the cell stores for a phase. */
export function phaseCode(phase: Phase): number {
  return PHASES.indexOf(phase);
}

/** The phase a cell's number stands for (`starting` for a word the cell never holds). */
export function phaseOfCode(code: number): Phase {
  return PHASES[code] ?? "starting";
}

/** The host's phase: `ended` once the terminal result is in, else what the cell's phase maps to. */
export function jobPhase(cell: Phase, resultIn: boolean): Extract<Phase, "starting" | "running" | "ended"> {
  return resultIn ? "ended" : LIFECYCLE[cell].host;
}

/**
 * Where a starting job is: before the claim the pool says whether its start still waits there (`waitsInPool`, asked
 * only then), inside spawn it is forking; past the spawn, or cancelled, it has no stage.
 */
export function startStageOf(cell: Phase, waitsInPool: () => boolean): StartStage | null {
  const start = LIFECYCLE[cell].start;
  if (start === "pool") return waitsInPool() ? "waiting_for_thread" : "booting";
  return start;
}

/**
 * The phase a layer shows of a job it still counts as live although the host may already hold its result (a monitor
 * whose record is not final yet): `ended` reads `running` until that layer has settled the job itself.
 */
export function livePhaseOf(phase: Extract<Phase, "starting" | "running" | "ended">): Extract<Phase, "starting" | "running"> {
  return phase === "starting" ? "starting" : "running";
}

/** What the shell tools and the console say of a job whose result is not in: its phase, or `stopping` from a stop request on. */
export function liveStatus(phase: Extract<Phase, "starting" | "running">, stopRequested: boolean): Extract<Phase, "starting" | "running" | "stopping"> {
  return stopRequested ? "stopping" : phase;
}
