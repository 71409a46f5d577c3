/**
 * Crash cleanup, the I/O half (the registry's format and the decisions are in host/safety/crash-registry.ts).
 *
 * Each runtime keeps a registry of its jobs in its private log directory, rewritten (to a temporary file, then renamed
 * over the old one, so a reader never sees half a file) when a job spawns, and removed when the runtime shuts down. A
 * Pi killed with SIGKILL leaves its registry behind; the next session that starts finds it, sees that its owner is
 * gone, and ends every process that still carries one of that runtime's tags.
 */
import { lstatSync, readFileSync, statSync, unlinkSync } from "node:fs";
import { readdir, rename, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { crashCleanupEnabled } from "../config.ts";
import { groupMembers, signalGroup } from "../../shared/process-group.ts";
import { processTable, type ProcessEntry } from "../../shared/process-table/index.ts";
import {
  cleanupNotice,
  formatRegistry,
  groupsStillLed,
  ownerAlive,
  parseRegistry,
  REGISTRY_FILE,
  type Registry,
  type RegistryJob,
} from "./crash-registry.ts";

/** The prefix of every session log directory (shared/log-budget.ts createSessionLogDir). */
const LOG_DIR_PREFIX = "pi-jobs-";
const POLL_MS = 25;

/** When `pid` started, as the process table tells it; null when there is no such process or the table cannot tell. */
export function readStartTicks(pid: number): number | null {
  return processTable().startOfNow(pid) ?? null;
}

export interface RegistryRecorder {
  add(job: Omit<RegistryJob, "leaderStartTicks">): void;
  remove(tag: string): void;
  /** Resolves once the file says what the recorder knows now, the jobs that ended included (removed when none is live). */
  flushed(): Promise<void>;
}

/**
 * Keeps `dir/jobs-registry.json` naming every live job. A spawn is written at once: what a crash cleans up is what the
 * file names. An end is not: it leaves the file at the next write, and the file is removed at shutdown, since an entry
 * left by a job that ended is never acted on (a recorded group is signalled only while its first process runs with
 * the recorded start time and carries the tag). Writing every end too, and removing the file whenever no job was live,
 * cost a short job twice the writes (docs/decisions/exit-net.md). Never per output, and off Pi's thread's critical
 * path: the write is asynchronous, and the spawns that come while one is under way share the next. Best effort: a
 * failed write leaves the previous registry (a crash then cleans up less, never something else).
 */
export function createRegistryRecorder(dir: string, runtimeId: string): RegistryRecorder | null {
  const ownerStart = readStartTicks(process.pid);
  if (ownerStart === null) return null;
  const path = join(dir, REGISTRY_FILE);
  const temporary = `${path}.${process.pid}.tmp`;
  const jobs = new Map<string, RegistryJob>();
  /** Whether the file may still name jobs that ended. */
  let stale = false;
  const write = async (): Promise<void> => {
    stale = false;
    try {
      if (jobs.size === 0) {
        await unlink(path).catch(() => {});
        return;
      }
      const registry: Registry = { owner: { pid: process.pid, startTicks: ownerStart, table: processTable().kind }, runtimeId, jobs: [...jobs.values()] };
      await writeFile(temporary, formatRegistry(registry), { mode: 0o600 });
      await rename(temporary, path);
    } catch {
      // The directory went away, or the disk is full: nothing to do but keep running.
    }
  };
  /** The write under way, if any; `dirty`: the jobs changed since it began. */
  let writing: Promise<void> | null = null;
  let dirty = false;
  const schedule = () => {
    dirty = true;
    if (writing !== null) return;
    writing = (async () => {
      while (dirty) {
        dirty = false;
        await write();
      }
      writing = null;
    })();
  };
  /** Jobs added whose leader's start time is still being read: written once it is. */
  const starting = new Set<Promise<void>>();
  return {
    add(job) {
      const entry: RegistryJob = { ...job, leaderStartTicks: null };
      jobs.set(job.tag, entry);
      // Written once the leader's start time is known: at once from the `proc` backend, after a `ps` (off Pi's thread) otherwise.
      const written = (start: number | null | undefined) => {
        if (jobs.get(job.tag) !== entry) return;
        entry.leaderStartTicks = start ?? null;
        schedule();
      };
      const known = processTable().startOf(job.pid).then(written, () => written(null));
      starting.add(known);
      void known.finally(() => starting.delete(known));
    },
    remove(tag) {
      if (jobs.delete(tag)) stale = true;
    },
    flushed: async () => {
      await Promise.all(starting);
      if (stale) schedule();
      await writing;
    },
  };
}

interface FoundRegistry {
  path: string;
  registry: Registry;
}

/** Directory entries checked between two turns of the event loop (see deadRegistries). */
const ENTRIES_PER_TURN = 128;

/**
 * Registries under `root` whose owner no longer runs; a live owner's registry is never touched. The temp directory can
 * hold thousands of entries (this machine's held 3,800 `pi-jobs-*` ones), and a check of each took 50–140 ms in all
 * under load: so the listing is asynchronous and the checks go a slice per turn of the event loop, and only a
 * directory that has a registry costs more than one stat.
 */
async function deadRegistries(root: string): Promise<FoundRegistry[]> {
  let entries: string[];
  try {
    entries = (await readdir(root)).filter((entry) => entry.startsWith(LOG_DIR_PREFIX));
  } catch {
    return [];
  }
  const uid = process.getuid?.();
  const found: FoundRegistry[] = [];
  for (let first = 0; first < entries.length; first += ENTRIES_PER_TURN) {
    if (first > 0) await new Promise((resolve) => setImmediate(resolve));
    for (const entry of entries.slice(first, first + ENTRIES_PER_TURN)) {
      const dir = join(root, entry);
      const path = join(dir, REGISTRY_FILE);
      // One stat that does not throw for the common case: a log directory without a registry.
      if (statSync(path, { throwIfNoEntry: false }) === undefined) continue;
      let text: string;
      try {
        const stat = lstatSync(dir);
        // Only our own private directories: never follow a link, never read another user's.
        if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid)) continue;
        text = readFileSync(path, "utf8");
      } catch {
        continue;
      }
      const parsed = parseRegistry(text);
      if ("error" in parsed) continue;
      const { owner } = parsed.registry;
      const table = processTable();
      if (ownerAlive(owner, await table.startOf(owner.pid), table.kind)) continue;
      found.push({ path, registry: parsed.registry });
    }
  }
  return found;
}

export interface CleanupReport {
  /** Processes that were signalled. */
  stopped: number;
  /** Labels of the jobs they belonged to. */
  labels: string[];
  /** Processes still running after SIGKILL and the wait: their registries are kept for the next session. */
  unconfirmed: number;
  /** The one line for the user; null when nothing was found running. */
  notice: string | null;
}

/**
 * Ends every process left by a dead owner's runtime (SIGTERM, SIGKILL after `graceMs`, then waits until each is gone)
 * and removes the registries that are fully cleaned up. It runs on Pi's thread: every read of the `proc` backend goes a slice per
 * turn of the event loop, or waits for a `ps` (shared/process-table/), and the scans of every process share one pass.
 */
export async function cleanUpAfterCrashes(options: { root?: string; graceMs?: number; confirmMs?: number } = {}): Promise<CleanupReport> {
  const registries = await deadRegistries(options.root ?? tmpdir());
  if (registries.length === 0) return { stopped: 0, labels: [], unconfirmed: 0, notice: null };
  const runtimeIds = registries.map((found) => found.registry.runtimeId);
  const table = processTable();
  const tagged = (await table.processesOfRuntimes(runtimeIds)) ?? [];
  const jobs = registries.flatMap((found) => found.registry.jobs);
  // A group is signalled only while its own first process still runs (same start time) and still carries its tag:
  // a group id reused since, or a bad registry, can never make us signal someone else's processes.
  const taggedPids = new Set(tagged.map((process) => process.pid));
  const leaders = await statsOf(jobs.map((job) => job.pid));
  const startTicks = (pid: number) => leaders?.get(pid)?.start ?? null;
  const groups = groupsStillLed(jobs, startTicks).filter((pgid) => pgid > 1 && taggedPids.has(pgid));
  const targets = new Set<number>(tagged.map((process) => process.pid));
  for (const members of await Promise.all(groups.map(groupMembers))) for (const pid of members) targets.add(pid);
  const hit = new Set<string>(tagged.map((process) => process.tag));
  for (const job of jobs) if (groups.includes(job.pgid)) hit.add(job.tag);

  let sent: "SIGTERM" | "SIGKILL" = "SIGTERM";
  const signal = (pid: number) => {
    try {
      process.kill(pid, sent);
    } catch {
      // Gone meanwhile.
    }
  };
  const signalAll = () => {
    for (const pgid of groups) signalGroup(pgid, sent);
    for (const pid of targets) signal(pid);
  };
  // A process in the middle of an exec shows no environment, so one scan can miss it: every check looks again, and
  // what carries a tag now is signalled at once with what the others got. Only a process that carries the tag when it
  // is found is ever signalled, so a pid reused since can never be hit by this.
  const running = async () => {
    for (const { pid, tag } of (await table.processesOfRuntimes(runtimeIds)) ?? []) {
      if (targets.has(pid)) continue;
      targets.add(pid);
      hit.add(tag);
      signal(pid);
    }
    const stats = await statsOf([...targets]);
    // A zombie is gone for our purposes: it cannot be killed, and it holds nothing. Unseen (the table could not
    // tell), every one still counts as running: gone is said only when seen.
    if (stats === null) return [...targets];
    return [...targets].filter((pid) => stats.has(pid) && stats.get(pid)!.state !== "Z");
  };
  signalAll();
  if (!(await until(async () => (await running()).length === 0, options.graceMs ?? 1000))) {
    sent = "SIGKILL";
    signalAll();
    await until(async () => (await running()).length === 0, options.confirmMs ?? 5000);
  }
  const unconfirmed = (await running()).length;
  if (unconfirmed === 0) {
    for (const found of registries) {
      try {
        unlinkSync(found.path);
      } catch {
        // Removed by another session's cleanup at the same time.
      }
    }
  }
  const stopped = targets.size;
  const labels = jobs.filter((job) => hit.has(job.tag)).map((job) => job.label);
  return { stopped, labels, unconfirmed, notice: stopped > 0 ? cleanupNotice(stopped, labels) : null };
}

/** Each of `pids` that exists, by its pid. */
/** The processes among `pids` that exist, by pid; null when the table could not tell. */
async function statsOf(pids: readonly number[]): Promise<Map<number, ProcessEntry> | null> {
  const entries = await processTable().groupMembers(null, pids);
  return entries === null ? null : new Map(entries.map((entry) => [entry.pid, entry]));
}

async function until(condition: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(POLL_MS);
  }
}

/**
 * Runs the cleanup without holding up the session's start, and tells the user once. Never throws: a cleanup that
 * fails leaves the registries for the next session.
 */
export function cleanUpInBackground(tell: (line: string) => void): Promise<CleanupReport | null> {
  if (!crashCleanupEnabled(process.env)) return Promise.resolve(null);
  return cleanUpAfterCrashes().then(
    (report) => {
      if (report.notice !== null) {
        try {
          tell(report.notice);
        } catch {
          // No UI to tell (the session ended meanwhile).
        }
      }
      return report;
    },
    () => null,
  );
}
