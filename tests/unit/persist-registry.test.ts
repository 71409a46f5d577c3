/**
 * The registry of persisted jobs (host/persist/registry.ts): private folders and files, whole writes, and entries read
 * without trust: torn, foreign or malformed ones are ignored with a warning.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  listEntries,
  newEntryDir,
  parseEnd,
  PERSIST_VERSION,
  persistTag,
  privateDir,
  projectDir,
  readEntry,
  recordOnExit,
  registryRoot,
  writeAtomic,
  writeEntry,
  type StartRecord,
} from "../../host/persist/registry.ts";

let base: string;
let cwd: string;
beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), "registry-"));
  cwd = mkdtempSync(join(tmpdir(), "project-"));
});
afterEach(() => {
  for (const dir of [base, cwd]) chmodSync(dir, 0o700);
});

function entryFor(project: string, over: Partial<StartRecord> = {}): StartRecord {
  return {
    version: PERSIST_VERSION,
    uid: process.getuid!(),
    project,
    cmd: "npm run dev",
    cwd: project,
    startedAtEpochMs: Date.now(),
    lifetimeMs: 60_000,
    startedByPid: 1234,
    onExit: "wake",
    limits: null,
    tag: null,
    ...over,
  };
}

/** The keeper's record of a job it runs. */
function keeperRan(entry: string): void {
  writeAtomic(join(entry, "keeper"), "keeper 4321 job 4322 started 1700000000000\n");
}

const mode = (path: string): number => statSync(path).mode & 0o777;

describe("persisted job registry", () => {
  it("keeps every folder 0700 and every file 0600, keyed by the project's real path", () => {
    const root = registryRoot(base);
    const { dir, project } = projectDir(join(cwd, "."), root);
    const entry = newEntryDir(dir);
    writeEntry(entry, entryFor(project));
    expect([mode(root), mode(dir), mode(entry)]).toEqual([0o700, 0o700, 0o700]);
    expect(mode(join(entry, "entry.json"))).toBe(0o600);
    expect(mode(join(dir, "project"))).toBe(0o600);
    // Another spelling of the same directory is the same project.
    mkdirSync(join(cwd, "sub"));
    expect(projectDir(join(cwd, "sub", ".."), root).dir).toBe(dir);
  });

  it("refuses a folder that other users can open", () => {
    const open = join(base, "open");
    mkdirSync(open, { mode: 0o755 });
    chmodSync(open, 0o755);
    expect(() => privateDir(open)).toThrow(/open to other users/);
  });

  it("writes whole files through a temporary name and leaves none behind", () => {
    const path = join(base, "file");
    for (let i = 0; i < 50; i += 1) writeAtomic(path, `${"x".repeat(i)}\n`);
    expect(readdirSync(base)).toEqual(["file"]);
    expect(mode(path)).toBe(0o600);
  });

  it("reads a good entry and its end", () => {
    const { dir, project } = projectDir(cwd, registryRoot(base));
    const entry = newEntryDir(dir);
    const record = entryFor(project);
    writeEntry(entry, record);
    keeperRan(entry);
    writeAtomic(join(entry, "end"), "exit 3 signal - ended 1700000001000 cause exited\n");
    const reading = readEntry(entry, { project });
    expect(reading).toEqual({
      ok: true,
      value: { dir: entry, entry: { ...record, keeperPid: 4321, pgid: 4322, spawnedAtEpochMs: 1_700_000_000_000 }, end: { exitCode: 3, signal: null, endedAtEpochMs: 1_700_000_001_000, cause: "exited" } },
    });
  });

  it("ignores torn, foreign and malformed entries with a warning, and lists the rest", () => {
    const { dir, project } = projectDir(cwd, registryRoot(base));
    const good = newEntryDir(dir);
    writeEntry(good, entryFor(project));
    keeperRan(good);
    const cases: [string, (entry: string) => void, RegExp][] = [
      ["torn", (e) => writeFileSync(join(e, "entry.json"), '{"version":1,"uid"', { mode: 0o600 }), /torn/],
      ["other user", (e) => writeEntry(e, entryFor(project, { uid: process.getuid!() + 1 })), /of user/],
      ["other project", (e) => writeEntry(e, entryFor("/elsewhere")), /another project/],
      ["other version", (e) => writeEntry(e, entryFor(project, { version: PERSIST_VERSION + 1 })), /version/],
      [
        "torn keeper record",
        (e) => {
          writeEntry(e, entryFor(project));
          writeFileSync(join(e, "keeper"), "keeper 43", { mode: 0o600 });
        },
        /keeper record is torn/,
      ],
      ["missing field", (e) => writeEntry(e, { ...entryFor(project), cmd: undefined } as unknown as StartRecord), /cmd/],
      ["not a persisted job's tag", (e) => writeEntry(e, entryFor(project, { tag: "0123456789ab/job_1" })), /tag is not/],
      [
        "another folder's tag",
        (e) => {
          writeEntry(e, entryFor(project, { tag: "p0123456789ab/job-other1" }));
          keeperRan(e);
        },
        /tag names another job's folder/,
      ],
      ["limits of the wrong shape", (e) => writeEntry(e, entryFor(project, { limits: { memoryBytes: -1, cpuMs: null, processes: null } })), /limits\.memoryBytes/],
      [
        "torn end",
        (e) => {
          writeEntry(e, entryFor(project));
          keeperRan(e);
          writeFileSync(join(e, "end"), "exit 3 sig", { mode: 0o600 });
        },
        /end is torn/,
      ],
      [
        "open folder",
        (e) => {
          writeEntry(e, entryFor(project));
          chmodSync(e, 0o755);
        },
        /open to other users/,
      ],
    ];
    const warnings: string[] = [];
    for (const [, write] of cases) write(newEntryDir(dir));
    // Being set up: no entry.json, or no keeper record, yet. Skipped without a warning.
    newEntryDir(dir);
    writeEntry(newEntryDir(dir), entryFor(project));
    // Abandoned while being set up (Pi died before the keeper started): removed, without a warning.
    const abandoned = newEntryDir(dir);
    writeEntry(abandoned, entryFor(project, { startedAtEpochMs: Date.now() - 120_000 }));
    const listed = listEntries(dir, project, (line) => warnings.push(line));
    expect(listed.map((e) => e.dir)).toEqual([good]);
    expect(warnings).toHaveLength(cases.length);
    for (const [name, , reason] of cases) expect(warnings.some((w) => reason.test(w)), name).toBe(true);
    expect(existsSync(abandoned)).toBe(false);
  });

  it("carries the job's own tag and limits; an entry written before them reads as untagged, without limits", () => {
    const { dir, project } = projectDir(cwd, registryRoot(base));
    const entry = newEntryDir(dir);
    const tag = persistTag(entry);
    expect(tag).toMatch(/^p[0-9a-f]{12}\/job-/);
    const limits = { memoryBytes: 1 << 20, cpuMs: null, processes: 8 };
    writeEntry(entry, entryFor(project, { tag, limits }));
    keeperRan(entry);
    expect(readEntry(entry, { project })).toMatchObject({ ok: true, value: { entry: { tag, limits } } });
    const { tag: _tag, limits: _limits, ...earlier } = entryFor(project);
    writeAtomic(join(entry, "entry.json"), JSON.stringify({ ...earlier, extra: "ignored" }));
    const reading = readEntry(entry, { project });
    expect(reading).toMatchObject({ ok: true, value: { entry: { tag: null, limits: null } } });
    // Only the fields it knows are carried on.
    expect(reading.ok && "extra" in reading.value.entry).toBe(false);
  });

  it("records a set_on_exit change in the entry, for the Pi that adopts the job next", () => {
    const { dir, project } = projectDir(cwd, registryRoot(base));
    const entry = newEntryDir(dir);
    writeEntry(entry, entryFor(project, { onExit: "wake", tag: persistTag(entry) }));
    keeperRan(entry);
    expect(recordOnExit(entry, project, "none")).toBe(true);
    expect(readEntry(entry, { project })).toMatchObject({ ok: true, value: { entry: { onExit: "none" } } });
    expect(recordOnExit(entry, "/elsewhere", "wake")).toBe(false);
    expect(recordOnExit(join(dir, "job-gone"), project, "wake")).toBe(false);
    expect(readEntry(entry, { project })).toMatchObject({ ok: true, value: { entry: { onExit: "none" } } });
  });

  it("reads an end record only whole", () => {
    expect(parseEnd("exit - signal SIGKILL ended 5 cause timeout\n")).toEqual({ exitCode: null, signal: "SIGKILL", endedAtEpochMs: 5, cause: "timeout" });
    expect(parseEnd("exit 0 signal - ended 5 cause exited")).toMatch(/torn/);
    expect(parseEnd("exit 1 signal SIGTERM ended 5 cause stopped\n")).toMatch(/both/);
  });
});
