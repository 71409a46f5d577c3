/**
 * `/reload` in the same process: the old extension instance parks its live state on a versioned registry on
 * globalThis, and the new instance adopts it in its session_start. Jobs, their buffers, deadlines and pending
 * notifications carry over untouched (nothing is reset). If no new instance adopts the state within ten seconds,
 * the parked state cleans itself up, so a failed reload cannot leave processes running.
 */
const REGISTRY = Symbol.for("pi-jobs.handover");
/** Bump when the shape of what is parked changes; an instance never adopts state of another version. */
export const HANDOVER_VERSION = 2;
const ADOPT_WITHIN_MS = 10_000;

export interface Parkable {
  /** Called when nobody adopted the state in time. */
  abandon(): Promise<void>;
}

interface Parked {
  version: number;
  parkedAt: number;
  state: Record<string, Parkable>;
  timer: ReturnType<typeof setTimeout>;
}

type Registry = { [REGISTRY]?: Parked };

export function park(state: Record<string, Parkable>, adoptWithinMs = ADOPT_WITHIN_MS): void {
  const registry = globalThis as Registry;
  const timer = setTimeout(() => {
    if (registry[REGISTRY]?.timer !== timer) return;
    delete registry[REGISTRY];
    for (const part of Object.values(state)) void part.abandon();
  }, adoptWithinMs);
  timer.unref();
  registry[REGISTRY] = { version: HANDOVER_VERSION, parkedAt: Date.now(), state, timer };
}

/** Takes the parked state if it is of this version; state of another version is cleaned up, not adopted. */
export function adopt(): Record<string, Parkable> | null {
  const registry = globalThis as Registry;
  const parked = registry[REGISTRY];
  if (!parked) return null;
  delete registry[REGISTRY];
  clearTimeout(parked.timer);
  if (parked.version !== HANDOVER_VERSION) {
    for (const part of Object.values(parked.state)) void part.abandon();
    return null;
  }
  return parked.state;
}
