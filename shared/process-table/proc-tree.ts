/**
 * The processes of a job's tree (every process carrying its tag), found incrementally for the usage watch's samples
 * (proc-table.ts, for actors/watch/usage-watch.ts). Every look reads the children of each member (one small file each),
 * and every `probeEveryMs` the pids the kernel allocated anywhere since the last such probe are probed, one `environ`
 * read each, the first probe covering every pid since the leader's: that finds what the children miss, a process whose
 * parent ended before the look (an escaped daemon, now init's child) or that another of a member's threads forked.
 * Probing on every look cost each job a read per process the whole machine started: 64 jobs that each forked ten times
 * a second cost the process a tenth of a core; and a first look that scanned for the tag at once cost every job that
 * outlived it a read of each process started since its spawn, a pass over all of `/proc` on a machine that forks a lot
 * (docs/decisions/limits-watchdog.md).
 *
 * A member stays a member while its stat can be read with the start time it had when it was found (a zombie too: its
 * CPU time is not yet its parent's), so a pid the kernel reuses for another process is never counted as the job's.
 */
import { lastAllocatedPid, maxPid, tagOf, taggedProcessesNow } from "./proc-tags.ts";
import { listPids } from "./proc-scan.ts";
import { childPids } from "./proc-stat.ts";

/** Up to this many new pids are probed one by one; more are filtered from a listing of /proc. */
const PROBE_LIMIT = 256;
/** A new process with no environment yet (in the middle of an exec) is looked at again this many times. */
const UNSETTLED_LOOKS = 3;

export class TreeMembers {
  private readonly tag: string;
  private readonly leader: number;
  private readonly spawnedAtEpoch: number;
  /** Members found so far; the caller drops those that are gone (`drop`). */
  private readonly known = new Set<number>();
  /** New processes without an environment yet, with the looks left. */
  private readonly unsettled = new Map<number, number>();
  /**
   * `ns_last_pid` at the previous probe, the leader's pid before the first (every pid allocated since it is still to
   * probe); null where it cannot be read: every probe then scans for the tag.
   */
  private last: number | null;
  /** When the allocated pids were last probed (monotonic ms); the window since the leader counts as opened at the start. */
  private probedAt = performance.now();
  private readonly probeEveryMs: number;

  /** `probeEveryMs`: how often the pids allocated anywhere are probed; 0 probes them on every look. */
  constructor(options: { tag: string; leader: number; spawnedAtEpoch: number; probeEveryMs: number }) {
    this.tag = options.tag;
    this.leader = options.leader;
    this.spawnedAtEpoch = options.spawnedAtEpoch;
    this.known.add(options.leader);
    this.last = options.leader;
    // Where the kernel does not list children, the probes are all there is.
    this.probeEveryMs = kernelListsChildren() ? options.probeEveryMs : 0;
  }

  /** The tree's pids now: the members known, their children, and the tagged processes found by a probe. */
  look(at: number = performance.now()): number[] {
    if (at - this.probedAt >= this.probeEveryMs) this.probeAllocated(at);
    // A Set's iteration visits what is added during it: the children of a child found here are read in this look too.
    for (const member of this.known) {
      for (const child of childPids(member) ?? []) this.probe(child, UNSETTLED_LOOKS);
    }
    for (const [pid, left] of [...this.unsettled]) {
      this.unsettled.delete(pid);
      this.probe(pid, left - 1);
    }
    return [...this.known];
  }

  /** Probes the pids allocated since the probe before (the first: since the leader), or scans for the tag where it must. */
  private probeAllocated(at: number): void {
    // Read before probing: a process forked during the probe is in the next one's range.
    const now = lastAllocatedPid();
    if (this.last === null || now === null) {
      const tagged = taggedProcessesNow(this.tag, { firstPid: this.leader, spawnedAt: this.spawnedAtEpoch });
      for (const pid of tagged ?? []) this.known.add(pid);
    } else if (now !== this.last) {
      for (const pid of newPids(this.last, now)) this.probe(pid, UNSETTLED_LOOKS);
    }
    this.last = now;
    this.probedAt = at;
  }

  /** A member is gone, or its pid now names another process. */
  drop(pid: number): void {
    this.known.delete(pid);
  }

  private probe(pid: number, looksLeft: number): void {
    if (this.known.has(pid)) return;
    const tag = tagOf(pid, this.tag);
    if (tag === "tagged") this.known.add(pid);
    else if (tag === "empty" && looksLeft > 0) this.unsettled.set(pid, looksLeft);
  }
}

let listsChildren: boolean | undefined;
/** Whether the kernel lists a process's children (`CONFIG_PROC_CHILDREN`): read once per thread, not once per job. */
function kernelListsChildren(): boolean {
  listsChildren ??= childPids(process.pid) !== null;
  return listsChildren;
}

/** The pids allocated after `from` up to `to`, counting round `pid_max`; those that exist, when there are many. */
function newPids(from: number, to: number): number[] {
  const max = maxPid();
  const count = to > from ? to - from : max === null ? Number.POSITIVE_INFINITY : max - from + to;
  if (count <= PROBE_LIMIT) {
    const pids: number[] = [];
    for (let i = 1; i <= count; i += 1) pids.push(max === null ? from + i : ((from + i - 1) % max) + 1);
    return pids;
  }
  const inRange = to > from ? (pid: number) => pid > from && pid <= to : (pid: number) => pid > from || pid <= to;
  return (listPids() ?? []).filter(inRange);
}
