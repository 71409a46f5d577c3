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
import { readdirSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import type { StopSignal } from "../mailbox/protocol.ts";
import { scanTag, signalTagged } from "./job-tag.ts";
import { statFields } from "./proc-stat.ts";


const IS_LINUX = process.platform === "linux";

/** The first and the largest pause between two checks of a group that is still alive. */
const POLL_START_MS = 5;
const POLL_CAP_MS = 50;

/** Our own process group, which must never be signalled as a job's (on Linux, where /proc tells it). */
let ownGroup: number | null | undefined;
function ownProcessGroup(): number | null {
  if (ownGroup === undefined) ownGroup = IS_LINUX ? (readStat(String(process.pid))?.pgrp ?? null) : null;
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
export function signalGroup(pgid: number, signal: StopSignal): boolean {
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
  const fields = statFields(pid);
  // state (3), pgrp (5).
  const pgrp = Number(fields?.[2]);
  if (fields?.[0] === undefined || !Number.isInteger(pgrp)) return null;
  return { pid: Number.parseInt(pid, 10), state: fields[0], pgrp };
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
  return new GroupWatch(pgid).alive();
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

/**
 * One wait for a group to be gone. A check costs one `kill(-pgid, 0)` while the leader runs or once the group is
 * gone — the common cases. Only when the group is alive although its leader is not (a descendant lingers, or only
 * zombies remain) does /proc tell the rest, and then the members seen once are re-read rather than all of /proc: a
 * zombie cannot fork, so the group can only have changed when a member it had is no longer running.
 */
class GroupWatch {
  private members: number[] | null = null;
  private readonly pgid: number;

  constructor(pgid: number) {
    this.pgid = pgid;
  }

  alive(): boolean {
    try {
      process.kill(-this.pgid, 0);
    } catch (error) {
      if (errorCode(error) === "ESRCH") return false;
    }
    if (!IS_LINUX) return true;
    const leader = readStat(String(this.pgid));
    if (leader !== null && leader.pgrp === this.pgid && leader.state !== "Z") return true;
    if (this.members !== null && this.members.some((pid) => runsInGroup(pid, this.pgid))) return true;
    const members = scanGroup(this.pgid);
    // Nothing visible although kill() answered: /proc hides it, or it just exited. Trust kill(); the next check settles.
    if (members === null || members.length === 0) {
      this.members = null;
      return true;
    }
    const running = members.filter((member) => member.state !== "Z").map((member) => member.pid);
    this.members = running;
    return running.length > 0;
  }
}

function runsInGroup(pid: number, pgid: number): boolean {
  const stat = readStat(String(pid));
  return stat !== null && stat.pgrp === pgid && stat.state !== "Z";
}

/** What may still run of a job: its group, and (when tagged) the processes that left the group carrying its tag. */
interface Remains {
  group: boolean;
  /** Tagged pids still running; null when they cannot be known (no /proc). */
  tagged: number[] | null;
  /** New processes whose environment could not be read yet, still waited for (see UNSETTLED_WAIT_MS). */
  unsettled: number;
}

const allGone = (left: Remains): boolean => !left.group && left.tagged !== null && left.tagged.length === 0 && left.unsettled === 0;

/**
 * How long a new process whose environment reads empty is waited for before it is taken for one that cleared its
 * environment (which escapes the tag anyway): one in the middle of an exec — a descendant that just left the group
 * with `setsid`, say — has its environment back within moments, carrying the tag.
 */
const UNSETTLED_WAIT_MS = 1000;

/**
 * Waits until nothing of the job runs (or nothing more can be learnt) or `timeoutMs` passed; `onStill` runs after
 * every check that found something. A check follows the pause (5 ms doubling to 50 ms) or the leader's exit,
 * whichever comes first, so the common stop — the leader dies of the signal and takes its group with it — is seen
 * when it happens rather than at the next poll.
 */
async function waitGone(
  remains: () => Remains,
  timeoutMs: number,
  leaderExit: Promise<unknown> | undefined,
  onStill?: (left: Remains) => void,
): Promise<Remains> {
  const deadline = performance.now() + Math.max(0, timeoutMs);
  let pause = POLL_START_MS;
  let exit = leaderExit?.then(() => {
    exit = undefined;
  });
  for (;;) {
    const left = remains();
    if (allGone(left) || (!left.group && left.tagged === null)) return left;
    onStill?.(left);
    const time = deadline - performance.now();
    if (time <= 0) return left;
    const nap = new AbortController();
    const napped = sleep(Math.min(pause, time), undefined, { signal: nap.signal }).catch(() => {});
    await (exit ? Promise.race([napped, exit]) : napped);
    nap.abort();
    pause = Math.min(pause * 2, POLL_CAP_MS);
  }
}

/** Resolves true once the group is gone, false if it is still alive after `timeoutMs`. */
export async function waitGroupGone(pgid: number, timeoutMs: number): Promise<boolean> {
  checkGroup(pgid);
  const watch = new GroupWatch(pgid);
  const left = await waitGone(() => ({ group: watch.alive(), tagged: [], unsettled: 0 }), timeoutMs, undefined);
  return !left.group;
}

export interface StopOptions {
  signal?: StopSignal;
  graceMs: number;
  confirmMs?: number;
  /**
   * The job's tag (shared/job-tag.ts): processes that left the group but carry it get the group's signals, and the
   * stop is confirmed only once none remains. Where environments cannot be read it is never confirmed.
   */
  tag?: string;
  /** Epoch ms when the leader was spawned: lets the tag scan read only processes started since (job-tag.ts). */
  spawnedAt?: number;
  /** Settles when the leader (the job's direct child) exited: the wait checks then instead of at the next poll. */
  leaderExit?: Promise<unknown>;
}

/**
 * Stops the group: `signal` (SIGTERM by default), up to `graceMs` for it to go, then SIGKILL to the whole group —
 * also when the direct child already exited, since what remains may ignore the first signal — and up to `confirmMs`
 * for the group to be gone. With a tag, the processes that left the group carrying it get the same signals.
 * `confirmed` is false if anything of the job still runs after all that, or if it cannot be known.
 */
export async function stopGroup(pgid: number, options: StopOptions): Promise<{ confirmed: boolean; escalated: boolean }> {
  checkGroup(pgid);
  const signal = options.signal ?? "SIGTERM";
  const confirmMs = options.confirmMs ?? 5000;
  const watch = new GroupWatch(pgid);
  const { tag, leaderExit } = options;
  const window = options.spawnedAt === undefined ? undefined : { firstPid: pgid, spawnedAt: options.spawnedAt };
  // Tagged processes are looked for only once the group is gone: until then the group's signal reaches its own
  // members, and a check costs one kill(0). What left the group is signalled when the scan finds it.
  const unsettledSince = new Map<number, number>();
  const remains = (): Remains => {
    const group = watch.alive();
    if (tag === undefined || group) return { group, tagged: [], unsettled: 0 };
    const scan = scanTag(tag, window);
    if (scan === null) return { group, tagged: null, unsettled: 0 };
    const now = performance.now();
    for (const pid of scan.unsettled) if (!unsettledSince.has(pid)) unsettledSince.set(pid, now);
    const unsettled = scan.unsettled.filter((pid) => now - unsettledSince.get(pid)! < UNSETTLED_WAIT_MS).length;
    return { group, tagged: scan.tagged, unsettled };
  };
  const killAll = (left: Remains) => {
    if (left.group) signalGroup(pgid, "SIGKILL");
    signalTagged(left.tagged ?? [], "SIGKILL");
  };

  const first = remains();
  if (allGone(first)) return { confirmed: true, escalated: false };
  if (first.group) signalGroup(pgid, signal);
  if (signal === "SIGKILL") {
    return { confirmed: allGone(await waitGone(remains, confirmMs, leaderExit, killAll)), escalated: false };
  }
  const signalled = new Set<number>();
  const termEscapees = (left: Remains) => {
    const fresh = (left.tagged ?? []).filter((pid) => !signalled.has(pid));
    for (const pid of fresh) signalled.add(pid);
    signalTagged(fresh, signal);
  };
  let left = await waitGone(remains, options.graceMs, leaderExit, termEscapees);
  if (allGone(left)) return { confirmed: true, escalated: false };
  if (!left.group && left.tagged === null) return { confirmed: false, escalated: false };
  // SIGKILL is repeated on every check: harmless to members already dying, and a stop that must leave nothing
  // running should not rest on a single delivery.
  killAll(left);
  left = await waitGone(remains, confirmMs, leaderExit, killAll);
  return { confirmed: allGone(left), escalated: true };
}
