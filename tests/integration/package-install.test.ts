/**
 * The package as users install it: `npm pack` (whose `prepare` compiles the workers), then `npm install` of the
 * tarball into a fresh project with Pi's flags (peers not installed). Node strips no types under node_modules, so
 * an installed pi-jobs can only start its workers from dist/, with every import they make resolvable there.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { runPrint, startRpc } from "../e2e/harness/cli.ts";
import { filesUnder, importSpecifiers, packAndInstall, removePackedInstall, unresolvedImports, type PackedInstall } from "../e2e/harness/pack.ts";
import { REPO_ROOT } from "../e2e/harness/paths.ts";

const PACK_TIMEOUT_MS = 300_000;

/** `<folder>/x/y.ts` → `x/y.js`, for every TypeScript source (declarations aside). */
function compiledNames(folder: string): string[] {
  return filesUnder(join(REPO_ROOT, folder), ".ts")
    .filter((file) => !file.endsWith(".d.ts"))
    .map((file) => file.replace(/\.ts$/, ".js"));
}

/** Files reachable from `entries` through static imports and literal dynamic imports, except the check loader. */
function productionGraph(pkgDir: string, entries: string[]): Set<string> {
  const seen = new Set<string>();
  const queue = [...entries];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const code = readFileSync(join(pkgDir, file), "utf8");
    for (const specifier of importSpecifiers(code)) {
      if (!specifier.startsWith(".")) continue;
      const target = relative(pkgDir, resolve(dirname(join(pkgDir, file)), specifier));
      // The schema checks are imported dynamically, and only when checks are on (never in an installed copy).
      const dynamic = code.includes(`import("${specifier}")`);
      if (target === "dist/mailbox/check.js" && dynamic) continue;
      queue.push(target);
    }
  }
  return seen;
}

describe("installed package", () => {
  let installed: PackedInstall;

  beforeAll(async () => {
    installed = await packAndInstall();
  }, PACK_TIMEOUT_MS);

  afterAll(async () => {
    await removePackedInstall();
  });

  test("ships dist/actors/*.js for every actors/*.ts and dist/mailbox/*.js for every mailbox/*.ts", () => {
    for (const folder of ["actors", "mailbox"]) {
      const expected = compiledNames(folder);
      expect(expected.length, `${folder}/ has sources`).toBeGreaterThan(0);
      const missing = expected.filter((name) => !existsSync(join(installed.pkgDir, "dist", folder, name)));
      expect(missing, `missing from the installed dist/${folder}/`).toEqual([]);
    }
  });

  test("ships the Pi entry point it declares, and no tests", () => {
    const manifest = JSON.parse(readFileSync(join(installed.pkgDir, "package.json"), "utf8")) as {
      pi?: { extensions?: string[] };
    };
    const entries = manifest.pi?.extensions ?? [];
    expect(entries.length).toBeGreaterThan(0);
    for (const entry of entries) expect(existsSync(join(installed.pkgDir, entry)), entry).toBe(true);
    expect(existsSync(join(installed.pkgDir, "tests"))).toBe(false);
  });

  test("every import the workers make in production resolves from the installed location", async () => {
    // Workers run on plain Node, outside Pi's module aliasing: a peer-only package (typebox) is simply absent here.
    // Only the development-time schema checks use it, and they are loaded only when checks are on.
    const devOnly = new Set(["dist/mailbox/check.js", "dist/mailbox/protocol.js", "dist/mailbox/monitor.js"]);
    const graph = productionGraph(installed.pkgDir, ["dist/actors/actor-thread.js", "dist/actors/job-actor.js", "dist/actors/regex-sandbox.js"]);
    for (const file of devOnly) expect(graph.has(file), `${file} is reachable from a worker entry`).toBe(false);
    const problems = (await unresolvedImports(installed.pkgDir)).filter((problem) => !devOnly.has(problem.file));
    expect(problems).toEqual([]);
  });

  test("a monitor runs through the installed copy's compiled workers", async () => {
    const run = await runPrint("go", {
      extensions: [installed.pkgDir],
      steps: [
        { toolCalls: [{ name: "monitor_start", arguments: { command: "echo noise; echo READY 42", result_pattern: "^READY (?<n>\\d+)$" } }] },
        { text: "{{last}}" },
      ],
    });
    expect(run.stderr).not.toMatch(/Failed to load extension|Extension error|ERR_MODULE_NOT_FOUND/i);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/status=success/);
    expect(run.stdout).toMatch(/capture\.n=42/);
  });

  test("index.ts loads in real Pi from the installed location", async () => {
    const run = await runPrint("ping", {
      extensions: [installed.pkgDir],
      steps: [{ text: "installed copy answers {{last}}" }],
    });
    expect(run.stderr).not.toMatch(/Failed to load extension|Extension error/i);
    expect({ code: run.code, stdout: run.stdout.trim() }, run.stderr).toEqual({ code: 0, stdout: "installed copy answers ping" });
  });

  test("/jobs comes from the installed copy and answers over RPC", async () => {
    const rpc = await startRpc({ extensions: [installed.pkgDir] });
    try {
      const commands = await rpc.request({ type: "get_commands" });
      const jobs = (commands.data as { commands: { name: string; sourceInfo?: { path?: string } }[] }).commands.find(
        (command) => command.name === "jobs",
      );
      expect(jobs?.sourceInfo?.path?.startsWith(installed.pkgDir), JSON.stringify(jobs)).toBe(true);

      const mark = rpc.records.length;
      expect(await rpc.prompt("/jobs")).toMatchObject({ success: true, data: { disposition: "handled" } });
      const notice = await rpc.waitFor(
        (record, index) => index >= mark && record.type === "extension_ui_request" && record.method === "notify",
      );
      expect(notice.message).toEqual(expect.stringMatching(/\S/));
      // A worker that cannot load must not take Pi down: a clean exit after the round trips says it stayed up.
      expect(await rpc.close(), rpc.stderr()).toEqual({ code: 0, signal: null });
    } finally {
      await rpc.close();
    }
  });
});
