/**
 * The registry of persisted jobs (exec_command with persist: true): one private folder per user under the temp
 * directory, in it one folder per project (by the real path of Pi's working directory), in that one folder per job.
 * A job's folder is its entry: `entry.json` (what Pi started, written by Pi), `keeper` (the keeper's and the job's
 * pids, written by the keeper once the job runs), `end` (exit code, signal, end time and cause, written by the keeper
 * when the job has ended), `log` (the job's output) and `stdin` (the FIFO the keeper holds open).
 *
 * Every folder is 0700 and every file 0600, and a folder that is not ours and private is refused, never used. Every
 * file is written whole: to a temporary name, then renamed. What is read is checked field by field: a torn entry, or
 * one of another user, project or version, is ignored with a warning and never trusted.
 */
import { createHash, randomBytes } from "node:crypto";
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { basename, join } from "node:path";
import type { ResourceLimits } from "../../mailbox/spec.ts";

/** Bump when the shape of entry.json changes; an entry of another version is ignored. */
export const PERSIST_VERSION = 1;

/** A job's entry: what Pi wrote before it started the keeper (entry.json), and the pids the keeper recorded. */
export interface PersistEntry {
  version: number;
  uid: number;
  /** The project's real path. */
  project: string;
  cmd: string;
  cwd: string;
  startedAtEpochMs: number;
  lifetimeMs: number;
  /** The Pi process that started it. */
  startedByPid: number;
  /** Whether its end wakes the model: the Pi that adopts it keeps the last choice (exec_command's, or set_on_exit's). */
  onExit: "none" | "wake";
  /** Its limits over its tree (exec_command's `limits`), which the Pi that adopts it goes on enforcing; null: none. */
  limits: ResourceLimits | null;
  /**
   * The job's own tag (`PI_JOBS_JOB`, shared/process-table/tags.ts), which the keeper sets for the job: its runtime
   * part is the job's own (persistTag), never a Pi's, so no Pi's exit net or crash cleanup takes it for its own. Null
   * for an entry written before jobs were tagged: its tree is then only its group.
   */
  tag: string | null;
  /** From the keeper's record (`keeper`), written before the keeper says the job runs. */
  keeperPid: number;
  /** The job's process group (its shell's pid). */
  pgid: number;
  /** When the keeper started the job (epoch ms): what the process table reads since, looking for its tag. */
  spawnedAtEpochMs: number;
}

/** What Pi writes into entry.json, before the keeper starts: so no job ever runs without an entry to adopt it by. */
export type StartRecord = Omit<PersistEntry, "keeperPid" | "pgid" | "spawnedAtEpochMs">;

/** A persisted job's tag is `p<12 hex digits>/<its folder's name>`: a Pi's runtime ids are hex only, so never equal. */
const TAG = /^p[0-9a-f]{12}\/job-[A-Za-z0-9]{1,16}$/;

/** A fresh tag for the job whose folder is `dir`. */
export function persistTag(dir: string): string {
  return `p${randomBytes(6).toString("hex")}/${basename(dir)}`;
}

/** An entry whose keeper never recorded a job this long after it was written is abandoned (Pi died starting it). */
const ABANDONED_AFTER_MS = 60_000;

/** What the keeper recorded when the job ended. */
export interface PersistEnd {
  exitCode: number | null;
  signal: string | null;
  endedAtEpochMs: number;
  cause: "exited" | "stopped" | "timeout";
}

export interface RegistryEntry {
  dir: string;
  entry: PersistEntry;
  end: PersistEnd | null;
}

export type EntryReading = { ok: true; value: RegistryEntry } | { ok: false; reason: string };

function uid(): number {
  return process.getuid?.() ?? userInfo().uid;
}

/** The user's registry under `base` (the temp directory unless given). */
export function registryRoot(base = tmpdir()): string {
  return join(base, `pi-persist-${uid()}`);
}

/** Creates the folder 0700 if it is missing, and refuses one that is a link, not ours, or open to others. */
export function privateDir(path: string): string {
  try {
    mkdirSync(path, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const stat = lstatSync(path);
  if (!stat.isDirectory() || stat.isSymbolicLink()) throw new Error(`${path} is not a directory`);
  if (stat.uid !== uid()) throw new Error(`${path} belongs to another user`);
  if ((stat.mode & 0o077) !== 0) throw new Error(`${path} is open to other users (mode ${(stat.mode & 0o777).toString(8)})`);
  return path;
}

/** The project's folder, keyed by the real path of `cwd`; its `project` file names that path. */
export function projectDir(cwd: string, root = registryRoot()): { dir: string; project: string } {
  const project = realpathSync(cwd);
  const key = createHash("sha256").update(project).digest("hex").slice(0, 32);
  const dir = privateDir(join(privateDir(root), key));
  writeAtomic(join(dir, "project"), `${project}\n`);
  return { dir, project };
}

/** A new job's folder in the project's. */
export function newEntryDir(projectFolder: string): string {
  return mkdtempSync(join(projectFolder, "job-"));
}

/** Writes the whole file under a temporary name, then renames it: a reader sees the old file or the new, never part. */
export function writeAtomic(path: string, text: string): void {
  const temp = `${path}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    writeFileSync(temp, text, { mode: 0o600, flag: "wx" });
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

export function writeEntry(dir: string, entry: StartRecord): void {
  writeAtomic(join(dir, "entry.json"), `${JSON.stringify(entry)}\n`);
}

const isInt = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value);

/** The start record, its fields checked one by one, or a string naming what is wrong. */
function entryOf(value: unknown): StartRecord | string {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "entry.json is not an object";
  const e = value as Record<string, unknown>;
  if (e.version !== PERSIST_VERSION) return `entry.json is of version ${JSON.stringify(e.version)}, not ${PERSIST_VERSION}`;
  for (const field of ["uid", "startedAtEpochMs", "lifetimeMs", "startedByPid"] as const) {
    if (!isInt(e[field]) || (e[field] as number) < 0) return `entry.json: ${field} is not a whole number`;
  }
  for (const field of ["project", "cmd", "cwd"] as const) if (typeof e[field] !== "string") return `entry.json: ${field} is not a string`;
  if (e.onExit !== "none" && e.onExit !== "wake") return "entry.json: onExit is not none or wake";
  if (e.tag !== undefined && e.tag !== null && (typeof e.tag !== "string" || !TAG.test(e.tag))) return "entry.json: tag is not a persisted job's tag";
  const limits = limitsIn(e.limits);
  if (typeof limits === "string") return limits;
  // Only the fields it knows: nothing else read from the file is carried on.
  return {
    version: PERSIST_VERSION,
    uid: e.uid as number,
    project: e.project as string,
    cmd: e.cmd as string,
    cwd: e.cwd as string,
    startedAtEpochMs: e.startedAtEpochMs as number,
    lifetimeMs: e.lifetimeMs as number,
    startedByPid: e.startedByPid as number,
    onExit: e.onExit,
    tag: (e.tag as string | undefined) ?? null,
    limits,
  };
}

/** The entry's limits, each a positive whole number or null; absent (an entry written before they were kept) is none. */
function limitsIn(value: unknown): ResourceLimits | null | string {
  if (value === undefined || value === null) return null;
  if (typeof value !== "object" || Array.isArray(value)) return "entry.json: limits is not an object";
  const l = value as Record<string, unknown>;
  const keys = ["memoryBytes", "cpuMs", "processes"] as const;
  if (Object.keys(l).some((key) => !(keys as readonly string[]).includes(key))) return "entry.json: limits has an unknown field";
  for (const key of keys) if (l[key] !== null && (!isInt(l[key]) || (l[key] as number) < 1)) return `entry.json: limits.${key} is not a positive whole number or null`;
  return { memoryBytes: l.memoryBytes as number | null, cpuMs: l.cpuMs as number | null, processes: l.processes as number | null };
}

const KEEPER_LINE = /^keeper (\d{2,10}) job (\d{2,10}) started (\d{1,16})\n$/;

const END_LINE = /^exit (-|\d{1,3}) signal (-|SIG[A-Z0-9+-]{1,12}) ended (\d{1,16}) cause (exited|stopped|timeout)\n$/;

/** The keeper's end record, or a string naming why it cannot be read (absent is null: the job has not ended). */
export function parseEnd(text: string): PersistEnd | string {
  const match = END_LINE.exec(text);
  if (match === null) return "end is torn or malformed";
  const [, code, signal, ended, cause] = match as unknown as [string, string, string, string, PersistEnd["cause"]];
  if ((code === "-") === (signal === "-")) return "end names neither or both of an exit code and a signal";
  return { exitCode: code === "-" ? null : Number(code), signal: signal === "-" ? null : signal, endedAtEpochMs: Number(ended), cause };
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/** Reads one job's folder, trusting nothing: it must be ours, private, of this version, user and project. */
export function readEntry(dir: string, expected: { project: string }): EntryReading {
  try {
    privateDir(dir);
    const raw = readText(join(dir, "entry.json"));
    if (raw === null) return { ok: false, reason: "no entry.json" };
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      return { ok: false, reason: "entry.json is torn (not JSON)" };
    }
    const entry = entryOf(parsed);
    if (typeof entry === "string") return { ok: false, reason: entry };
    if (entry.uid !== uid()) return { ok: false, reason: `entry.json is of user ${entry.uid}` };
    if (entry.project !== expected.project) return { ok: false, reason: `entry.json is of another project (${JSON.stringify(entry.project)})` };
    const keeperText = readText(join(dir, "keeper"));
    if (keeperText === null) return { ok: false, reason: Date.now() - entry.startedAtEpochMs > ABANDONED_AFTER_MS ? "abandoned: no keeper ever started" : "no keeper yet" };
    const pids = KEEPER_LINE.exec(keeperText);
    if (pids === null) return { ok: false, reason: "keeper record is torn or malformed" };
    const endText = readText(join(dir, "end"));
    const end = endText === null ? null : parseEnd(endText);
    if (typeof end === "string") return { ok: false, reason: end };
    if (entry.tag !== null && !entry.tag.endsWith(`/${basename(dir)}`)) return { ok: false, reason: "entry.json: tag names another job's folder" };
    const recorded = { keeperPid: Number(pids[1]), pgid: Number(pids[2]), spawnedAtEpochMs: Number(pids[3]) };
    return { ok: true, value: { dir, entry: { ...entry, ...recorded }, end } };
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
}

/**
 * Every readable entry of the project, oldest first. A folder still being set up (no entry.json or no keeper record
 * yet) is skipped silently, one abandoned while being set up is removed; any other that cannot be trusted is reported
 * through `warn` and left alone.
 */
export function listEntries(projectFolder: string, project: string, warn: (line: string) => void): RegistryEntry[] {
  const out: RegistryEntry[] = [];
  for (const name of readdirSync(projectFolder).filter((n) => n.startsWith("job-")).sort()) {
    const dir = join(projectFolder, name);
    const reading = readEntry(dir, { project });
    if (reading.ok) out.push(reading.value);
    else if (reading.reason.startsWith("abandoned")) removeEntry(dir);
    else if (reading.reason !== "no entry.json" && reading.reason !== "no keeper yet") warn(`pi-jobs: ignored the persisted job entry ${dir}: ${reading.reason}`);
  }
  return out.sort((a, b) => a.entry.startedAtEpochMs - b.entry.startedAtEpochMs);
}

/**
 * Records a new on_exit choice (set_on_exit) in the entry, so that the Pi that adopts the job next keeps it. False when
 * the entry cannot be read or written (gone: the job's end was reported and its entry released).
 */
export function recordOnExit(dir: string, project: string, onExit: PersistEntry["onExit"]): boolean {
  try {
    const raw = readText(join(dir, "entry.json"));
    if (raw === null) return false;
    const entry = entryOf(JSON.parse(raw));
    if (typeof entry === "string" || entry.project !== project) return false;
    writeEntry(dir, { ...entry, onExit });
    return true;
  } catch {
    return false;
  }
}

/** Removes a job's folder once its end has been reported (or it was never started). */
export function removeEntry(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
