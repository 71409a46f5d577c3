/**
 * Signalling a job's process group and confirming that it is gone (Linux and macOS).
 *
 * Every job runs as the leader of its own process group, so `kill(-pgid)` reaches the shell and everything it started,
 * even after the shell itself exited. A stop is only claimed once the group is confirmed empty: a grandchild that
 * ignores SIGTERM keeps the group alive, so SIGKILL follows after the grace period even when the direct child is gone.
 *
 * Zombies: some containers run a PID 1 that never reaps orphans. A zombie still counts for `kill(-pgid, 0)` but can
 * never be killed, so on Linux a group whose remaining members are all zombies counts as gone.
 */
import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

export type GroupSignal = "SIGTERM" | "SIGKILL" | "SIGINT" | "SIGHUP" | "SIGQUIT";

const IS_LINUX = process.platform === "linux";

/** The first and the largest pause between two checks of a group that is still alive. */
const POLL_START_MS = 5;
const POLL_CAP_MS = 50;

/** Our own process group, which must never be signalled as a job's (on Linux, where /proc tells it). */
let ownGroup: number | null | undefined;
function ownProcessGroup(): number | null {
  if (ownGroup === undefined) ownGroup = IS_LINUX ? (readStat("self")?.pgrp ?? null) : null;
  return ownGroup;
}

/**
 * `kill(-0)` signals our own group and `kill(-1)` every process we may signal: a bad pgid must fail loudly, not
 * take Pi (or the machine) down with it.
 */
function checkGroup(pgid: number): void {
  if (!Number.isSafeInteger(pgid) || pgid <= 1) throw new RangeError(`not a job's process group id: ${String(pgid)}`);
  if (pgid === ownProcessGroup()) throw new RangeError(`refusing to signal our own process group ${pgid}`);
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

/** Sends `signal` to every member of the group. False when nothing was signalled (the group is gone, or not ours). */
export function signalGroup(pgid: number, signal: GroupSignal): boolean {
  checkGroup(pgid);
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    // ESRCH: the group is gone. EPERM: nothing left in it may be signalled by us. Either way this call can do
    // nothing more, and a race with a group that is exiting must not throw into a stop path.
    const code = errorCode(error);
    if (code === "ESRCH" || code === "EPERM") return false;
    throw error;
  }
}

interface StatFields {
  pid: number;
  state: string;
  pgrp: number;
}

/** The fields of /proc/<pid>/stat we need; null when the process is gone or unreadable. */
function readStat(pid: string): StatFields | null {
  let raw: string;
  try {
    raw = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return null;
  }
  // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so parse after the last ')'.
  const close = raw.lastIndexOf(")");
  if (close < 0) return null;
  const fields = raw.slice(close + 2).split(" ");
  const pgrp = Number(fields[2]);
  if (fields[0] === undefined || !Number.isInteger(pgrp)) return null;
  return { pid: Number.parseInt(raw, 10), state: fields[0], pgrp };
}

/** Members of the group visible in /proc (zombies included); null when /proc cannot be listed. */
function scanGroup(pgid: number): StatFields[] | null {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return null;
  }
  const members: StatFields[] = [];
  for (const entry of entries) {
    const first = entry.charCodeAt(0);
    if (first < 48 || first > 57) continue;
    const stat = readStat(entry);
    if (stat !== null && stat.pgrp === pgid) members.push(stat);
  }
  return members;
}

/** Whether any member of the group that can still run (i.e. is not a zombie) exists. */
export function groupAlive(pgid: number): boolean {
  checkGroup(pgid);
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    if (errorCode(error) === "ESRCH") return false;
    // EPERM: the group exists but is not ours to signal; it is alive for all we can tell.
  }
  if (!IS_LINUX) return true;
  // The common case while waiting: the leader itself still runs. Only otherwise is all of /proc read.
  const leader = readStat(String(pgid));
  if (leader !== null && leader.pgrp === pgid && leader.state !== "Z") return true;
  const members = scanGroup(pgid);
  // Nothing visible although kill() answered: /proc hides it, or it just exited. Trust kill(); the next check settles.
  if (members === null || members.length === 0) return true;
  return members.some((member) => member.state !== "Z");
}

/** Live (non-zombie) pids of the group, from /proc on Linux; [] elsewhere. */
export function groupMembers(pgid: number): number[] {
  checkGroup(pgid);
  if (!IS_LINUX) return [];
  return (scanGroup(pgid) ?? [])
    .filter((member) => member.state !== "Z")
    .map((member) => member.pid)
    .sort((a, b) => a - b);
}

/** Polls until the group is gone or `timeoutMs` passed, calling `beforeCheck` before every check after the first. */
async function pollGone(pgid: number, timeoutMs: number, beforeCheck?: () => void): Promise<boolean> {
  const deadline = performance.now() + Math.max(0, timeoutMs);
  let pause = POLL_START_MS;
  for (;;) {
    if (!groupAlive(pgid)) return true;
    const left = deadline - performance.now();
    if (left <= 0) return false;
    await sleep(Math.min(pause, left));
    pause = Math.min(pause * 2, POLL_CAP_MS);
    beforeCheck?.();
  }
}

/** Resolves true once the group is gone, false if it is still alive after `timeoutMs`. */
export function waitGroupGone(pgid: number, timeoutMs: number): Promise<boolean> {
  checkGroup(pgid);
  return pollGone(pgid, timeoutMs);
}

/**
 * Stops the group: `signal` (SIGTERM by default), up to `graceMs` for it to go, then SIGKILL to the whole group —
 * also when the direct child already exited, since what remains may ignore the first signal — and up to `confirmMs`
 * for the group to be gone. `confirmed` is false only if something of the group still runs after all that.
 */
export async function stopGroup(
  pgid: number,
  options: { signal?: GroupSignal; graceMs: number; confirmMs?: number },
): Promise<{ confirmed: boolean; escalated: boolean }> {
  checkGroup(pgid);
  const signal = options.signal ?? "SIGTERM";
  const confirmMs = options.confirmMs ?? 5000;
  if (!groupAlive(pgid)) return { confirmed: true, escalated: false };
  signalGroup(pgid, signal);
  if (signal === "SIGKILL") {
    return { confirmed: await pollGone(pgid, confirmMs, () => signalGroup(pgid, "SIGKILL")), escalated: false };
  }
  if (await pollGone(pgid, options.graceMs)) return { confirmed: true, escalated: false };
  signalGroup(pgid, "SIGKILL");
  // SIGKILL is repeated on every check: harmless to members already dying, and a stop that must leave nothing
  // running should not rest on a single delivery.
  return { confirmed: await pollGone(pgid, confirmMs, () => signalGroup(pgid, "SIGKILL")), escalated: true };
}
