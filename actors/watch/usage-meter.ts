/**
 * Folds one sample of a job's tree (each member's stat figures) into the tree's usage: resident memory, live processes,
 * CPU time since the spawn and CPU over the last interval, with the peaks. Pure.
 *
 * CPU time is counted so that it only grows and nothing counts twice. Each member's figure is its own time plus that
 * of the children it has reaped (what `/proc/<pid>/stat` says), and the sample adds what each member gained since the
 * previous one, a new member's whole figure, and nothing for a member that is gone: when a member ends, its parent
 * reaps it and the parent's figure grows by all of the child's time, of which what the previous sample already counted
 * is taken off again. A member reaped by a process outside the tree takes its last interval's time with it: at most
 * one interval of one process is lost, never counted twice.
 */
import type { TreeUsage } from "../../mailbox/cell.ts";

/** One member's figures in one sample. */
export interface MemberSample {
  pid: number;
  ppid: number;
  /** Own and reaped children's CPU time (utime + stime + cutime + cstime), in ms. */
  cpuMs: number;
  rssBytes: number;
  /** A zombie: it counts its CPU time until it is reaped, but neither memory nor a live process. */
  zombie: boolean;
}

export class UsageMeter {
  private members = new Map<number, MemberSample>();
  private lastAt: number | null = null;
  private cpuMs = 0;
  private peakRssBytes = 0;
  private peakProcesses = 0;

  /** Folds the sample taken at `at` (monotonic ms) in; returns the tree's usage after it. */
  sample(at: number, members: readonly MemberSample[]): TreeUsage {
    const current = new Map(members.map((member) => [member.pid, member]));
    let gained = 0;
    for (const member of members) gained += member.cpuMs - (this.members.get(member.pid)?.cpuMs ?? 0);
    for (const [pid, before] of this.members) {
      // Gone, and reaped by a member still here: its time is in that parent's figure now, and was counted before.
      if (!current.has(pid) && current.has(before.ppid)) gained -= before.cpuMs;
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
