/**
 * The processes of a job's tree (every process carrying its tag), found incrementally for the usage watch's samples
 * (actors/watch/usage-watch.ts). The first look scans for the tag as the cleanup does (shared/job-tag.ts); after that
 * only the pids the kernel allocated since the previous look are probed, one `environ` read each: a sample of an idle
 * job reads one small file besides its own processes' stat lines, whatever else runs on the machine.
 *
 * A member stays a member while its stat can be read with the start time it had when it was found (a zombie too: its
 * CPU time is not yet its parent's), so a pid the kernel reuses for another process is never counted as the job's.
 */
import { lastAllocatedPid, maxPid, tagOf, taggedProcessesNow } from "../../shared/job-tag.ts";
import { listPids } from "../../shared/proc-scan.ts";

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
  /** `ns_last_pid` at the previous look; null before the first (or where it cannot be read: every look scans). */
  private last: number | null = null;

  constructor(options: { tag: string; leader: number; spawnedAtEpoch: number }) {
    this.tag = options.tag;
    this.leader = options.leader;
    this.spawnedAtEpoch = options.spawnedAtEpoch;
    this.known.add(options.leader);
  }

  /** The tree's pids now: the members known, and the tagged processes started since the previous look. */
  look(): number[] {
    // Read before probing: a process forked during the probe is in the next look's range.
    const now = lastAllocatedPid();
    if (this.last === null || now === null) {
      const tagged = taggedProcessesNow(this.tag, { firstPid: this.leader, spawnedAt: this.spawnedAtEpoch });
      for (const pid of tagged ?? []) this.known.add(pid);
    } else if (now !== this.last) {
      for (const pid of newPids(this.last, now)) this.probe(pid, UNSETTLED_LOOKS);
    }
    for (const [pid, left] of [...this.unsettled]) {
      this.unsettled.delete(pid);
      this.probe(pid, left - 1);
    }
    this.last = now;
    return [...this.known];
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
