/**
 * Everything shell jobs must keep across /reload, in one versioned object: the sessions (with their handles and
 * unread output), the wake ledger and the codemode scripts in flight. A new extension instance adopts the object
 * from globalThis after /reload; if none does within ten seconds, the parked state stops its own jobs.
 */
import { SessionRegistry } from "./registry.ts";
import type { ShellSession } from "./session.ts";
import { WakeLedger, type WakeTiming } from "./wake-ledger.ts";

export const STATE_VERSION = 1;
const PARKING = Symbol.for("pi-jobs.shell.v1");
const ADOPT_WITHIN_MS = 10_000;

export interface ShellState {
  readonly version: typeof STATE_VERSION;
  readonly registry: SessionRegistry<ShellSession>;
  readonly ledger: WakeLedger;
  /** Outermost tool call id of a running codemode script → sessions its nested calls touched. */
  readonly scripts: Map<string, Set<number>>;
  /** Called after every completion; the owning instance points it at its wake scheduler. */
  onCompletion: () => void;
  /** Set while the session shuts down: completions then owe nothing. */
  closing: boolean;
}

export function createShellState(options: { capacity?: number; wakeTiming?: WakeTiming } = {}): ShellState {
  return {
    version: STATE_VERSION,
    registry: new SessionRegistry<ShellSession>(options.capacity),
    ledger: new WakeLedger(options.wakeTiming),
    scripts: new Map(),
    onCompletion: () => {},
    closing: false,
  };
}

interface Parked {
  version: number;
  state: ShellState;
  timer: ReturnType<typeof setTimeout>;
}

type Parking = { [PARKING]?: Parked };

/** Leaves the state for the next instance; `abandon` runs if nobody adopts it in time. */
export function parkState(state: ShellState, abandon: (state: ShellState) => Promise<void>, adoptWithinMs = ADOPT_WITHIN_MS): void {
  const parking = globalThis as Parking;
  state.onCompletion = () => {};
  const timer = setTimeout(() => {
    if (parking[PARKING]?.timer !== timer) return;
    delete parking[PARKING];
    void abandon(state);
  }, adoptWithinMs);
  timer.unref();
  parking[PARKING] = { version: STATE_VERSION, state, timer };
}

/** Takes parked state of this version; state of another version is handed to `abandon`, never adopted. */
export function adoptState(abandon: (state: ShellState) => Promise<void>): ShellState | null {
  const parking = globalThis as Parking;
  const parked = parking[PARKING];
  if (parked === undefined) return null;
  delete parking[PARKING];
  clearTimeout(parked.timer);
  if (parked.version !== STATE_VERSION) {
    void abandon(parked.state);
    return null;
  }
  return parked.state;
}
