/**
 * The portable backend of the process table: `ps` (BSD or procps) and `lsof`, which macOS and Linux both ship. A scan
 * of every process is one `ps` of the user's processes with their environments, shared by every asker of a turn
 * (ps-run.ts); a job's tree is sampled by one `ps` for all the runtime's jobs (ps-sampler.ts). It never reads `/proc`
 * itself (procps does, in its own process).
 *
 * What it gives up against /proc: CPU time counts a process's own only (not the children it reaped) and, from procps,
 * in whole seconds; start times are whole seconds; a process whose environment is not readable yet (in the middle of
 * an exec) is not told apart from one without a tag; and there are no per-thread figures (host/runtime/heartbeat.ts
 * judges a late actor by the machine's load instead). docs/decisions/process-table.md.
 */
import { lsofListening, ps, psNow, selectPids, selectUser, userProcesses } from "./ps-run.ts";
import { parseLsofPorts, type PsRow } from "./ps-rows.ts";
import { subscribeTree } from "./ps-sampler.ts";
import { runtimeOfTag, type TaggedProcess } from "./tags.ts";
import type { ProcessEntry, MemberSample, ProcessTable, TreeSampler, TreeSamplerOptions } from "./table.ts";

/** Running or runnable (R), and waiting for a disk: D on procps, U ("uninterruptible wait") on BSD. */
const RUNNABLE = new Set(["R", "D", "U"]);

const sortPids = (pids: number[]): number[] => pids.sort((a, b) => a - b);

function ofRuntimes(rows: readonly PsRow[] | null, runtimeIds: readonly string[]): TaggedProcess[] | null {
  if (rows === null) return null;
  const wanted = new Set(runtimeIds);
  const found: TaggedProcess[] = [];
  for (const row of rows) {
    if (row.tag === null || row.state === "Z" || row.pid === process.pid) continue;
    const runtime = runtimeOfTag(row.tag);
    if (runtime !== null && wanted.has(runtime)) found.push({ pid: row.pid, tag: row.tag });
  }
  return found.sort((a, b) => a.pid - b.pid);
}

function inGroup(rows: readonly PsRow[] | null, pgid: number | null): ProcessEntry[] | null {
  if (rows === null) return null;
  return rows.filter((row) => pgid === null || row.pgid === pgid).map((row) => ({ pid: row.pid, state: row.state, pgrp: row.pgid, start: row.startedAt }));
}

/** `pid`'s start in `rows`: null when it is not among them, undefined when `ps` gave no answer. */
const startIn = (rows: readonly PsRow[] | null, pid: number): number | null | undefined =>
  rows === null ? undefined : (rows.find((row) => row.pid === pid)?.startedAt ?? null);

const rowsOf = (among: readonly number[] | null): Promise<PsRow[] | null> =>
  among === null ? userProcesses() : among.length === 0 ? Promise.resolve([]) : ps(selectPids(among));
const rowsOfNow = (among: readonly number[] | null): PsRow[] | null =>
  among === null ? psNow(selectUser()) : among.length === 0 ? [] : psNow(selectPids(among));

/** A job's tree: the rows of its tag in each of the runtime's samples. */
class PsTreeSampler implements TreeSampler {
  readonly countsReaped = false;
  /** Whole seconds until a sample shows finer figures (BSD `ps` prints hundredths). */
  cpuStepMs = 1000;
  private readonly unsubscribe: () => void;

  constructor(options: TreeSamplerOptions) {
    const runtime = runtimeOfTag(options.tag) ?? options.tag;
    this.unsubscribe = subscribeTree(runtime, options.tag, options.everyMs, (at, rows) => {
      if (rows.length > 0) this.cpuStepMs = Math.max(...rows.map((row) => row.cpuStepMs));
      const members: MemberSample[] = rows.map((row) => ({
        pid: row.pid,
        ppid: row.ppid,
        cpuMs: row.cpuMs,
        rssBytes: row.rssBytes,
        zombie: row.state === "Z",
        runnable: RUNNABLE.has(row.state),
      }));
      options.onSample(at, members);
    });
  }

  dispose(): void {
    this.unsubscribe();
  }
}

export const psTable: ProcessTable = {
  kind: "ps",
  async scanTag(tag) {
    const rows = await userProcesses();
    if (rows === null) return null;
    return { tagged: sortPids(rows.filter((row) => row.tag === tag && row.state !== "Z" && row.pid !== process.pid).map((row) => row.pid)), unsettled: [] };
  },
  async stillTagged(pids, tag) {
    const rows = await rowsOf(pids);
    // One whose environment reads empty while it runs may be exiting (its memory torn down first): still there.
    return rows === null ? null : sortPids(rows.filter((row) => row.state !== "Z" && (row.tag === tag || row.tag === null)).map((row) => row.pid));
  },
  processesOfRuntimes: async (runtimeIds) => (runtimeIds.length === 0 ? [] : ofRuntimes(await userProcesses(), runtimeIds)),
  processesOfRuntimesNow: (runtimeIds) => (runtimeIds.length === 0 ? [] : ofRuntimes(psNow(selectUser()), runtimeIds)),
  groupMembers: async (pgid, among) => inGroup(await rowsOf(among), pgid),
  groupMembersNow: (pgid, among) => inGroup(rowsOfNow(among), pgid),
  processNow: () => undefined,
  inSlice: async (work) => work(),
  startOf: async (pid) => startIn(await ps(selectPids([pid])), pid),
  startOfNow: (pid) => startIn(psNow(selectPids([pid])), pid),
  async listening(pids) {
    if (pids.length === 0) return [];
    const output = await lsofListening(pids);
    return output === null ? null : parseLsofPorts(output);
  },
  treeSampler: (options) => new PsTreeSampler(options),
  readsThreads: false,
  ownThreadId: () => null,
  readThread: async () => null,
};
