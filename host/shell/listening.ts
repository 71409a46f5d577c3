/**
 * The ports each running shell job listens on, as last read from its actor (which asks the process table). Kept
 * beside the sessions rather than in them: it is a cache of a reading, refreshed whenever a list is asked for.
 */
import type { ShellSession } from "./session.ts";

const lastRead = new WeakMap<ShellSession, number[] | null>();

/** Reads the listening ports of these sessions from their actors, all at once. */
export async function refreshListening(sessions: readonly ShellSession[]): Promise<void> {
  await Promise.all(
    sessions.map(async (session) => {
      lastRead.set(session, await session.handle.listening());
    }),
  );
}

const inFlight = new WeakSet<ShellSession>();
const refreshedAt = new WeakMap<ShellSession, number>();
/** A screen that refreshes several times a second reads ports at most this often (a lookup costs the actor ~ms). */
const SCREEN_REFRESH_MS = 2_000;

/** Starts a read for a screen that refreshes on its own (the console): at most one per session at a time. */
export function refreshSoon(session: ShellSession): void {
  if (inFlight.has(session) || session.handle.phase() === "ended") return;
  const now = performance.now();
  if (now - (refreshedAt.get(session) ?? -Infinity) < SCREEN_REFRESH_MS) return;
  refreshedAt.set(session, now);
  inFlight.add(session);
  void refreshListening([session]).finally(() => inFlight.delete(session));
}

/** The ports as last read; null where they cannot be listed; undefined before any read (nothing is known). */
export function listeningOf(session: ShellSession): number[] | null | undefined {
  return lastRead.get(session);
}
