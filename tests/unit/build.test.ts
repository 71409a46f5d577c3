import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { needsBuild } from "../../scripts/build.ts";

const roots: string[] = [];

afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A package root holding `files`, each with its modification time in seconds. */
function packageWith(files: Record<string, number>): string {
  const root = mkdtempSync(join(tmpdir(), "build-"));
  roots.push(root);
  for (const [file, seconds] of Object.entries(files)) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), "");
    utimesSync(join(root, file), seconds, seconds);
  }
  return root;
}

const BUNDLE = "dist/actors/thread/actor-thread.cjs";

describe("needsBuild", () => {
  it("is true without dist/", () => {
    expect(needsBuild(packageWith({ "actors/job/actor.ts": 1_000 }))).toBe(true);
  });

  it("is false when the last build ended after every source and the build script changed", () => {
    expect(needsBuild(packageWith({ "actors/job/actor.ts": 1_000, "spawner/spawner.ts": 1_500, "scripts/build.ts": 1_200, [BUNDLE]: 2_000 }))).toBe(false);
  });

  it("is true once any source of the four worker folders is newer than the build, however deep", () => {
    for (const source of ["actors/a/b/c.ts", "mailbox/spec.ts", "shared/config.ts", "spawner/spawner.ts"]) {
      expect(needsBuild(packageWith({ [source]: 3_000, [BUNDLE]: 2_000 })), source).toBe(true);
    }
  });

  it("is true when the build script changed, and ignores what no worker runs", () => {
    expect(needsBuild(packageWith({ "scripts/build.ts": 3_000, [BUNDLE]: 2_000 }))).toBe(true);
    expect(needsBuild(packageWith({ "host/runtime/runtime.ts": 3_000, "actors/notes.md": 3_000, [BUNDLE]: 2_000 }))).toBe(false);
  });
});
