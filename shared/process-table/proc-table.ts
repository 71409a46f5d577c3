/**
 * The `/proc` backend of the process table (Linux): each process's own files, read a slice per turn of the event loop
 * (proc-scan.ts). Its figures are the kernel's: CPU time in clock ticks with the reaped children's, start time in
 * ticks since boot, resident pages.
 */
import { procThreadId, readProcThread } from "./proc-thread.ts";
import { listeningPorts } from "./proc-ports.ts";
import { inSlice, scan, scanNow, type ProcScan } from "./proc-scan.ts";
import { pageBytes, startTicksOf, statField, statFields, statNumber, TICKS_PER_SECOND } from "./proc-stat.ts";
import { processesOfRuntimes, processesOfRuntimesNow, scanTag, stillTagged } from "./proc-tags.ts";
import { TreeMembers } from "./proc-tree.ts";
import type { ProcessEntry, MemberSample, ProcessTable, TreeSampler, TreeSamplerOptions } from "./table.ts";

/** When a job's first sample is taken, after its spawn: a short command (`ls`, `git status`) is over by then. */
const FIRST_SAMPLE_MS = 50;

const CPU_FIELDS = ["utime", "stime", "cutime", "cstime"] as const;
const RUNNABLE = new Set(["R", "D"]);

function memberOf(pid: number, fields: readonly string[] | null): ProcessEntry | null {
  if (fields === null) return null;
  const state = statField(fields, "state");
  const pgrp = statNumber(fields, "pgrp");
  const start = startTicksOf(fields);
  if (state === undefined || !Number.isInteger(pgrp) || start === null) return null;
  return { pid, state, pgrp, start };
}

/** Members of the group visible in /proc (zombies included), or those of `among` only. */
function groupScan(pgid: number | null, among: readonly number[] | null): ProcScan<ProcessEntry[]> {
  const members: ProcessEntry[] = [];
  return {
    pids: among,
    visit(pid, reads) {
      const member = memberOf(pid, reads.stat());
      if (member !== null && (pgid === null || member.pgrp === pgid)) members.push(member);
    },
    result: () => members,
  };
}

/**
 * A job's tree sampled on the calling thread's timers: the members (proc-tree.ts), each read from its stat. A member
 * stays one while its start time is the one it had when found, so a reused pid is never counted as the job's.
 */
class ProcTreeSampler implements TreeSampler {
  readonly countsReaped = true;
  readonly cpuStepMs = 1000 / TICKS_PER_SECOND;
  private readonly members: TreeMembers;
  private readonly starts = new Map<number, number>();
  private readonly timer: ReturnType<typeof setInterval>;
  private first: ReturnType<typeof setTimeout> | null;
  private readonly onSample: TreeSamplerOptions["onSample"];

  constructor(options: TreeSamplerOptions) {
    this.onSample = options.onSample;
    this.members = new TreeMembers({ tag: options.tag, leader: options.leader, spawnedAtEpoch: options.spawnedAtEpoch, probeEveryMs: options.probeEveryMs });
    this.timer = setInterval(() => this.sample(), options.everyMs);
    this.timer.unref();
    // The first sample waits FIRST_SAMPLE_MS: a short command is over by then and never pays for it, and a job that runs
    // on has its figures almost at once (docs/benchmarks.md, "Where a short job's time goes"). It reads the leader and
    // its children only; the pids allocated since the leader wait for the first probe (proc-tree.ts).
    this.first = setTimeout(() => {
      this.first = null;
      this.sample();
    }, FIRST_SAMPLE_MS);
    this.first.unref();
  }

  dispose(): void {
    clearInterval(this.timer);
    if (this.first !== null) clearTimeout(this.first);
  }

  private sample(): void {
    const at = performance.now();
    this.onSample(at, this.readNow());
  }

  readNow(): MemberSample[] {
    const page = pageBytes();
    const samples: MemberSample[] = [];
    for (const pid of this.members.look()) {
      const fields = statFields(pid);
      const start = fields === null ? null : startTicksOf(fields);
      const known = this.starts.get(pid);
      if (fields === null || start === null || (known !== undefined && known !== start)) {
        this.members.drop(pid);
        this.starts.delete(pid);
        continue;
      }
      if (known === undefined) this.starts.set(pid, start);
      let ticks = 0;
      for (const field of CPU_FIELDS) ticks += statNumber(fields, field) || 0;
      samples.push({
        pid,
        ppid: statNumber(fields, "ppid"),
        cpuMs: (ticks * 1000) / TICKS_PER_SECOND,
        rssBytes: (statNumber(fields, "rss") || 0) * page,
        zombie: statField(fields, "state") === "Z",
        runnable: RUNNABLE.has(statField(fields, "state") ?? ""),
      });
    }
    return samples;
  }
}

function startTicks(pid: number): number | null {
  const fields = statFields(pid);
  return fields === null ? null : startTicksOf(fields);
}

export const procTable: ProcessTable = {
  kind: "proc",
  scanTag,
  stillTagged,
  processesOfRuntimes,
  processesOfRuntimesNow,
  groupMembers: (pgid, among) => scan(groupScan(pgid, among)),
  groupMembersNow: (pgid, among) => scanNow(groupScan(pgid, among)),
  processNow: (pid) => memberOf(pid, statFields(pid)),
  inSlice,
  startOf: async (pid) => startTicks(pid),
  startOfNow: startTicks,
  listening: async (pids) => listeningPorts(pids),
  treeSampler: (options) => new ProcTreeSampler(options),
  readsThreads: true,
  ownThreadId: procThreadId,
  readThread: async (tid) => readProcThread(tid),
};
