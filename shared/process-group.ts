/**
 * Signalling a job's process group and confirming that it is gone (Linux and macOS).
 *
 * Every job runs as the leader of its own process group, so `kill(-pgid)` reaches the shell and everything it started,
 * even after the shell itself exited. A stop is only claimed once the group is confirmed empty: a grandchild that
 * ignores SIGTERM keeps the group alive, so SIGKILL follows after the grace period even when the direct child is gone.
 *
 * Zombies: some containers run a PID 1 that never reaps orphans. A zombie still counts for `kill(-pgid, 0)` but can
 * never be killed, so a group whose remaining members are all zombies counts as gone.
 *
 * What it learns beyond kill() comes from the process table (shared/process-table/), whose reads never hold the
 * thread for long: the supervisor runs these stops on Pi's thread.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { StopSignal } from "../mailbox/control.ts";
import { processTable, signalTagged, type ProcessEntry } from "./process-table/index.ts";

/** The first and the largest pause between two checks of a group that is still alive. */
const POLL_START_MS = 5;
const POLL_CAP_MS = 50;

/** Our own process group, which must never be signalled as a job's (read once, from the process table). */
let ownGroup: number | null | undefined;
function ownProcessGroup(): number | null {
  if (ownGroup === undefined) {
    ownGroup = processTable().groupMembersNow(null, [process.pid])?.[0]?.pgrp ?? null;
  }
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

const running = (members: readonly ProcessEntry[]): number[] => members.filter((member) => member.state !== "Z").map((member) => member.pid);

/** Whether any member of the group that can still run (i.e. is not a zombie) exists. A bad group id throws at once. */
export function groupAlive(pgid: number): Promise<boolean> {
  checkGroup(pgid);
  return new GroupWatch(pgid).alive();
}

/** Live (non-zombie) pids of the group; [] when the table cannot tell. A bad group id throws at once. */
export function groupMembers(pgid: number): Promise<number[]> {
  checkGroup(pgid);
  return processTable().groupMembers(pgid, null).then((members) => running(members ?? []).sort((a, b) => a - b));
}

/**
 * One wait for a group to be gone. A check costs one `kill(-pgid, 0)` while the leader runs or once the group is
 * gone — the common cases. Only when the group is alive although its leader is not (a descendant lingers, or only
 * zombies remain) does the process table tell the rest, and then the members seen once are re-read rather than every
 * process: a zombie cannot fork, so the group can only have changed when a member it had is no longer running. Once a
 * look found only zombies, the group is over for good: they may wait a while for whoever reaps them, and meanwhile no
 * check reads the table again (with every poll of a stop's grace doing so, one stop cost ~200 ms of CPU where PID 1
 * reaps late). Where the table cannot read the leader at once (the portable backend), every check past kill() reads
 * the members.
 */
class GroupWatch {
  private members: number[] | null = null;
  private onlyZombies = false;
  private readonly pgid: number;

  constructor(pgid: number) {
    this.pgid = pgid;
  }

  async alive(): Promise<boolean> {
    // Cheap, but the checks of 64 jobs taken over at once come due together (a failing kill() costs an exception).
    const table = processTable();
    const quick = await table.inSlice(() => this.quick());
    if (quick !== null) return quick;
    if (this.onlyZombies) return false;
    if (this.members !== null && running((await table.groupMembers(this.pgid, this.members)) ?? []).length > 0) return true;
    return this.judge(await table.groupMembers(this.pgid, null));
  }

  /** What kill() and the leader's own figures tell; null when only the members can. */
  private quick(): boolean | null {
    try {
      process.kill(-this.pgid, 0);
    } catch (error) {
      if (errorCode(error) === "ESRCH") return false;
    }
    const leader = processTable().processNow(this.pgid);
    if (leader === undefined) return null;
    return leader !== null && leader.pgrp === this.pgid && leader.state !== "Z" ? true : null;
  }

  /** The verdict from a scan of every process (null: the table could not be read). */
  private judge(members: ProcessEntry[] | null): boolean {
    // Nothing visible although kill() answered: the table hides it, or it just exited. Trust kill(); the next check settles.
    if (members === null || members.length === 0) {
      this.members = null;
      return true;
    }
    this.members = running(members);
    this.onlyZombies = this.members.length === 0;
    return !this.onlyZombies;
  }
}

/** What may still run of a job: its group, and (when tagged) the processes that left the group carrying its tag. */
interface Remains {
  group: boolean;
  /** Tagged pids still running; null when they cannot be known (the table could not be read). */
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
 * How long a stop watches the tagged processes a scan found before it scans every process again: a process that
 * leaves the group while the stop is under way is found within this, and always before the stop is confirmed.
 */
const FULL_SCAN_EVERY_MS = 1000;

/**
 * Waits until nothing of the job runs (or nothing more can be learnt) or `timeoutMs` passed; `onStill` runs after
 * every check that found something. A check follows the pause (5 ms doubling to 50 ms) or the leader's exit,
 * whichever comes first, so the common stop — the leader dies of the signal and takes its group with it — is seen
 * when it happens rather than at the next poll.
 */
async function waitGone(
  remains: () => Promise<Remains>,
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
    const left = await remains();
    if (allGone(left) || (!left.group && left.tagged === null)) return left;
    // The checks of concurrent stops finish together, at the end of the pass they shared: their signals are sliced.
    if (onStill) await processTable().inSlice(() => onStill(left));
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
  const left = await waitGone(async () => ({ group: await watch.alive(), tagged: [], unsettled: 0 }), timeoutMs, undefined);
  return !left.group;
}

export interface StopOptions {
  signal?: StopSignal;
  graceMs: number;
  confirmMs?: number;
  /**
   * The job's tag (shared/process-table/tags.ts): processes that left the group but carry it get the group's signals, and the
   * stop is confirmed only once none remains. Where environments cannot be read it is never confirmed.
   */
  tag?: string;
  /** Epoch ms when the leader was spawned: lets a tag scan read only processes started since (the `proc` backend). */
  spawnedAt?: number;
  /** Settles when the leader (the job's direct child) exited: the wait checks then instead of at the next poll. */
  leaderExit?: Promise<unknown>;
}

/** How a stop of the process group went: confirmed gone, and whether SIGKILL was needed after the grace. */
export interface StopOutcome {
  confirmed: boolean;
  escalated: boolean;
}

/**
 * Stops the group: `signal` (SIGTERM by default), up to `graceMs` for it to go, then SIGKILL to the whole group —
 * also when the direct child already exited, since what remains may ignore the first signal — and up to `confirmMs`
 * for the group to be gone. With a tag, the processes that left the group carrying it get the same signals.
 * `confirmed` is false if anything of the job still runs after all that, or if it cannot be known.
 */
export async function stopGroup(pgid: number, options: StopOptions): Promise<StopOutcome> {
  checkGroup(pgid);
  const signal = options.signal ?? "SIGTERM";
  const confirmMs = options.confirmMs ?? 5000;
  const watch = new GroupWatch(pgid);
  const table = processTable();
  const { tag, leaderExit } = options;
  const window = options.spawnedAt === undefined ? undefined : { firstPid: pgid, spawnedAt: options.spawnedAt };
  // Tagged processes are looked for only once the group is gone: until then the group's signal reaches its own
  // members, and a check costs one kill(0). What left the group is signalled when the scan finds it.
  const unsettledSince = new Map<number, number>();
  // What a scan of every process found is then watched by itself, one read a pid, until it is gone or
  // FULL_SCAN_EVERY_MS has passed: a scan on every poll of the grace cost a stop ~150 ms of CPU for one escapee.
  let watched: { pids: number[]; since: number } | null = null;
  const remains = async (): Promise<Remains> => {
    const group = await watch.alive();
    if (tag === undefined || group) return { group, tagged: [], unsettled: 0 };
    // The escapees found before, as they are now: still tagged, or still exiting (which a scan no longer sees).
    const still = watched === null ? [] : ((await table.stillTagged(watched.pids, tag)) ?? []);
    if (watched !== null && still.length > 0 && performance.now() - watched.since < FULL_SCAN_EVERY_MS) {
      watched.pids = still;
      return { group, tagged: still, unsettled: 0 };
    }
    // Nothing watched, all of it gone, or time for a full look: only a scan of every process confirms a stop.
    const found = await table.scanTag(tag, window);
    if (found === null) {
      watched = null;
      return { group, tagged: null, unsettled: 0 };
    }
    const tagged = [...new Set([...found.tagged, ...still])].sort((a, b) => a - b);
    const now = performance.now();
    watched = tagged.length === 0 ? null : { pids: tagged, since: now };
    for (const pid of found.unsettled) if (!unsettledSince.has(pid)) unsettledSince.set(pid, now);
    const unsettled = found.unsettled.filter((pid) => now - unsettledSince.get(pid)! < UNSETTLED_WAIT_MS).length;
    return { group, tagged, unsettled };
  };
  const killAll = (left: Remains) => {
    if (left.group) signalGroup(pgid, "SIGKILL");
    signalTagged(left.tagged ?? [], "SIGKILL");
  };
  // The tagged processes are looked for only once the group is gone, so a stop whose time ran out while the group still
  // stood (its members dying slowly on a loaded machine) has not signalled those that left it. It kills them before it
  // gives up: unconfirmed, but nothing it could find is left running.
  const killEscapees = async (left: Remains) => {
    if (tag === undefined || !left.group) return;
    const found = await table.scanTag(tag, window);
    await table.inSlice(() => signalTagged(found?.tagged ?? [], "SIGKILL"));
  };

  const first = await remains();
  if (allGone(first)) return { confirmed: true, escalated: false };
  if (signal === "SIGKILL") {
    await table.inSlice(() => killAll(first));
    const left = await waitGone(remains, confirmMs, leaderExit, killAll);
    if (!allGone(left)) await killEscapees(left);
    return { confirmed: allGone(left), escalated: false };
  }
  const signalled = new Set<number>();
  const termEscapees = (left: Remains) => {
    const fresh = (left.tagged ?? []).filter((pid) => !signalled.has(pid));
    for (const pid of fresh) signalled.add(pid);
    signalTagged(fresh, signal);
  };
  await table.inSlice(() => {
    if (first.group) signalGroup(pgid, signal);
    termEscapees(first);
  });
  let left = await waitGone(remains, options.graceMs, leaderExit, termEscapees);
  if (allGone(left)) return { confirmed: true, escalated: false };
  if (!left.group && left.tagged === null) return { confirmed: false, escalated: false };
  // SIGKILL is repeated on every check: harmless to members already dying, and a stop that must leave nothing
  // running should not rest on a single delivery.
  await table.inSlice(() => killAll(left));
  left = await waitGone(remains, confirmMs, leaderExit, killAll);
  if (!allGone(left)) await killEscapees(left);
  return { confirmed: allGone(left), escalated: true };
}
