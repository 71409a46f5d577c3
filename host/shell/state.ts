/**
 * Everything shell jobs must keep across /reload, in one object: the sessions (with their handles and unread
 * output) and the codemode scripts in flight. It is parked and adopted through the host's handover registry
 * (host/session/handover.ts), whose version covers its shape. The results its jobs owe the model are kept by the
 * delivery's ledger (host/delivery/ledger.ts), which the state only borrows: the delivery owns it and parks it too.
 */
import type { Ownership } from "../persist/owner-lock.ts";
import type { RegistryEntry } from "../persist/registry.ts";
import { SessionRegistry } from "./registry.ts";
import type { ShellSession } from "./session.ts";
import { ResultLedger } from "../delivery/ledger.ts";

export interface ShellState {
  readonly registry: SessionRegistry<ShellSession>;
  /** The delivery's ledger (host/delivery/install.ts owns it). */
  readonly ledger: ResultLedger;
  /** Outermost tool call id of a running codemode script → sessions its nested calls touched. */
  readonly scripts: Map<string, Set<number>>;
  /** Called after every completion; the owning instance points it at its wake scheduler. */
  onCompletion: () => void;
  /** Set while the session shuts down: completions then owe nothing. */
  closing: boolean;
  /** The persisted jobs of Pi's working directory (host/shell/adopt.ts). */
  persisted: PersistState;
}

/** Whether this Pi owns its directory's persisted jobs, and what another owner's registry holds. */
export interface PersistState {
  /** Settles once session_start has tried to take the directory's lock; a Pi that does not own it starts none. */
  ownership: Promise<Ownership>;
  /** Settles once every job is adopted, or listed as another Pi's (list_sessions waits for it). */
  adopted: Promise<void>;
  /** The jobs of the Pi that owns them, when that is another one (its pid if known): listed, never adopted nor stopped. */
  elsewhere: { ownerPid: number | null; jobs: readonly RegistryEntry[] };
}

/** A new state on `ledger` (the delivery's; one of its own when none is given, for a service without wakes). */
export function createShellState(options: { capacity?: number; ledger?: ResultLedger } = {}): ShellState {
  return {
    registry: new SessionRegistry<ShellSession>(options.capacity),
    ledger: options.ledger ?? new ResultLedger(),
    scripts: new Map(),
    onCompletion: () => {},
    closing: false,
    persisted: { ownership: Promise.resolve({ owned: false, ownerPid: null }), adopted: Promise.resolve(), elsewhere: { ownerPid: null, jobs: [] } },
  };
}
