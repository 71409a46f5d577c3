/**
 * The crash-cleanup registry, pure: what a runtime records about its live jobs in its private log directory, how
 * that is written and read back, and what a later session decides from it. The file and process I/O is in
 * host/safety/crash-cleanup.ts.
 *
 * A process id alone cannot say whether the Pi that wrote a registry still runs: the pid may have been reused. So the
 * owner is named by its pid and its start time (as the process table tells it: clock ticks since boot from the `proc`
 * backend, epoch seconds from `ps`), and likewise each job's group leader, so that a group id reused since is never
 * signalled. The registry names the table whose figures it holds: a session on the other table cannot compare them,
 * and leaves the registry to one on the same table.
 */

import type { TableKind } from "../../shared/process-table/index.ts";

export const REGISTRY_FILE = "jobs-registry.json";
const VERSION = 1;

export interface RegistryOwner {
  pid: number;
  /** Start time of the owner process, in the units of `table`. */
  startTicks: number;
  /** The process table whose figures the start times are (shared/process-table/). */
  table: TableKind;
}

export interface RegistryJob {
  tag: string;
  pid: number;
  pgid: number;
  /** Start time of the group leader (the job's first process), as the owner's table tells it; null when unreadable. */
  leaderStartTicks: number | null;
  /** Epoch milliseconds of the spawn. */
  startedAt: number;
  /** The command label shown to the user. */
  label: string;
}

export interface Registry {
  owner: RegistryOwner;
  runtimeId: string;
  jobs: RegistryJob[];
}

export function formatRegistry(registry: Registry): string {
  return `${JSON.stringify({ version: VERSION, ...registry })}\n`;
}

/** The registry a file holds, or an error naming what is wrong with it. */
export function parseRegistry(text: string): { registry: Registry } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: "not JSON" };
  }
  if (!isRecord(value)) return { error: "not an object" };
  if (value.version !== VERSION) return { error: `version: expected ${VERSION}` };
  const owner = value.owner;
  if (!isRecord(owner) || !isPid(owner.pid) || !isCount(owner.startTicks)) return { error: "owner: expected { pid, startTicks }" };
  // A registry written before the table was named holds the `proc` backend's figures.
  const table = owner.table ?? "proc";
  if (table !== "proc" && table !== "ps") return { error: 'owner.table: expected "proc" or "ps"' };
  if (typeof value.runtimeId !== "string" || !/^[0-9a-f]+$/.test(value.runtimeId)) return { error: "runtimeId: expected hex" };
  if (!Array.isArray(value.jobs)) return { error: "jobs: expected an array" };
  const jobs: RegistryJob[] = [];
  for (const [index, job] of value.jobs.entries()) {
    if (
      !isRecord(job) ||
      typeof job.tag !== "string" ||
      !job.tag.startsWith(`${value.runtimeId}/`) ||
      !isPid(job.pid) ||
      !isPid(job.pgid) ||
      !(job.leaderStartTicks === null || isCount(job.leaderStartTicks)) ||
      typeof job.startedAt !== "number" ||
      typeof job.label !== "string"
    ) {
      return { error: `jobs[${index}]: expected { tag of this runtime, pid, pgid, leaderStartTicks, startedAt, label }` };
    }
    jobs.push({
      tag: job.tag,
      pid: job.pid,
      pgid: job.pgid,
      leaderStartTicks: job.leaderStartTicks,
      startedAt: job.startedAt,
      label: job.label,
    });
  }
  return { registry: { owner: { pid: owner.pid, startTicks: owner.startTicks, table }, runtimeId: value.runtimeId, jobs } };
}

/**
 * Whether the registry's owner still runs, from the start time its pid has now (null: no such process). A pid that
 * runs with another start time was reused by an unrelated process: the owner is gone.
 */
export function ownerAlive(owner: RegistryOwner, currentStartTicks: number | null | undefined, table: TableKind): boolean {
  // A registry of the other table, or an owner the table cannot see now: it may be alive, and is never touched.
  if (owner.table !== table || currentStartTicks === undefined) return true;
  return currentStartTicks !== null && currentStartTicks === owner.startTicks;
}

/** Groups still led by the job's own first process (same pid, same start time), so they may be signalled. */
export function groupsStillLed(jobs: readonly RegistryJob[], startTicksOf: (pid: number) => number | null): number[] {
  return jobs.filter((job) => job.leaderStartTicks !== null && job.pid === job.pgid && startTicksOf(job.pid) === job.leaderStartTicks).map((job) => job.pgid);
}

/** The one line that tells the user what was cleaned up. */
export function cleanupNotice(processes: number, labels: readonly string[]): string {
  const what = processes === 1 ? "1 process" : `${processes} processes`;
  const shown = labels.slice(0, 3).map((label) => (label.length > 40 ? `${label.slice(0, 39)}…` : label));
  const more = labels.length > shown.length ? ", …" : "";
  return `pi-jobs: stopped ${what} left by a Pi session that ended without shutdown${shown.length > 0 ? `: ${shown.join(", ")}${more}` : ""}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isPid(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) > 0;
}

function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}
