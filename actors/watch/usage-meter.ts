/**
 * Folds one sample of a job's tree (each member's stat figures) into the tree's usage: resident memory, live processes,
 * CPU time since the spawn and CPU over the last interval, with the peaks. Pure.
 *
 * CPU time is counted so that it only grows and nothing counts twice. The sample adds what each member gained since
 * the previous one, a new member's whole figure, and nothing for a member that is gone. Where a member's figure counts
 * the children it has reaped too (the `proc` backend of the process table), a member that ends is reaped by its parent,
 * whose figure grows by all of the child's time, of which what the previous sample already counted is taken off
 * again. Where it counts its own time only (`ps`), a member that ends simply stops adding. Either way a member takes
 * its last interval's time with it when it ends unseen: at most one interval of one process is lost, never counted
 * twice.
 */
import type { TreeUsage } from "../../mailbox/cell.ts";
import type { MemberSample } from "../../shared/process-table/index.ts";

export type { MemberSample };

export class UsageMeter {
  /** Whether a member's CPU figure includes the children it reaped (TreeSampler.countsReaped). */
  private readonly countsReaped: boolean;
  private members = new Map<number, MemberSample>();
  private lastAt: number | null = null;
  private cpuMs = 0;
  private peakRssBytes = 0;
  private peakProcesses = 0;

  constructor(countsReaped = true) {
    this.countsReaped = countsReaped;
  }

  /** Folds the sample taken at `at` (monotonic ms) in; returns the tree's usage after it. */
  sample(at: number, members: readonly MemberSample[]): TreeUsage {
    const current = new Map(members.map((member) => [member.pid, member]));
    let gained = 0;
    for (const member of members) gained += member.cpuMs - (this.members.get(member.pid)?.cpuMs ?? 0);
    for (const [pid, before] of this.members) {
      // Gone, and reaped by a member still here: its time is in that parent's figure now, and was counted before.
      if (this.countsReaped && !current.has(pid) && current.has(before.ppid)) gained -= before.cpuMs;
    }
    const added = Math.max(0, gained);
    const interval = this.lastAt === null ? null : at - this.lastAt;
    this.cpuMs += added;
    this.members = current;
    this.lastAt = at;
    let rssBytes = 0;
    let processes = 0;
    for (const member of members) {
      if (member.zombie) continue;
      rssBytes += member.rssBytes;
      processes += 1;
    }
    this.peakRssBytes = Math.max(this.peakRssBytes, rssBytes);
    this.peakProcesses = Math.max(this.peakProcesses, processes);
    return {
      rssBytes,
      peakRssBytes: this.peakRssBytes,
      cpuPercent: interval === null || interval <= 0 ? null : (added / interval) * 100,
      cpuMs: this.cpuMs,
      processes,
      peakProcesses: this.peakProcesses,
    };
  }
}
