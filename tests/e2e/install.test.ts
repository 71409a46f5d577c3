/**
 * Every way a user installs pi-jobs, each through Pi's own `pi install` into a fresh agent dir, then a real Pi that
 * loads the package from that agent dir's settings (as it does for a user) and runs one monitor to success and one
 * PTY job:
 * - `pi install git:github.com/<owner>/pi-jobs`: a local repository of the working tree stands in for GitHub;
 * - `pi install ./pi-jobs`: this checkout, after its `npm install`;
 * - `pi install npm:pi-jobs`: the tarball `npm pack` makes, installed with the npm arguments Pi uses for npm.
 * Node strips no TypeScript types under node_modules, so the npm install must run compiled workers from dist/, with
 * every import they make resolvable there. A git clone and a checkout lie outside node_modules; either form may run.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { runJson, runPrint, startRpc, type PiRecord } from "./harness/cli.ts";
import { gitInstallPath, gitRemoteOfWorkingTree, inside, piInstall, recordWorkerLoads } from "./harness/install.ts";
import { filesUnder, importSpecifiers, unresolvedImports } from "./harness/pack.ts";
import { makeTempDir, removeDir, REPO_ROOT } from "./harness/paths.ts";
import { packAndInstall, removePackedInstall, type PackedInstall } from "../fixtures/packed-install.ts";

const PACK_TIMEOUT_MS = 300_000;
const INSTALL_TIMEOUT_MS = 300_000;
/** A Pi that loads an installed copy from scratch (its own loader compiles index.ts) needs longer on a busy machine. */
const RUN_TIMEOUT_MS = 120_000;

interface ToolEnd {
  toolName: string;
  result: { content: { type: string; text?: string }[]; details: Record<string, unknown> };
}

/**
 * Real Pi with `agentDir`'s installed packages runs one monitor to success and one PTY job; returns every file its
 * worker threads loaded.
 */
async function runJobs(agentDir: string): Promise<string[]> {
  const dir = makeTempDir("loads");
  try {
    const loads = recordWorkerLoads(dir);
    const run = await runJson("go", {
      agentDir,
      // Only the faux model: pi-jobs comes from the agent dir's settings, where `pi install` put it.
      extensions: [],
      env: loads.env,
      timeoutMs: RUN_TIMEOUT_MS,
      steps: [
        { toolCalls: [{ name: "monitor_start", arguments: { command: "echo noise; echo READY 42", result_pattern: "^READY (?<n>\\d+)$" } }] },
        { toolCalls: [{ name: "exec_command", arguments: { cmd: "tty && echo TTY-OK", tty: true, yield_time_ms: 30_000 } }] },
        { text: "done" },
      ],
    });
    expect(run.stderr).not.toMatch(/Failed to load extension|Extension error|ERR_MODULE_NOT_FOUND/i);
    expect(run.code, run.stderr).toBe(0);
    const ends = run.events.filter((event: PiRecord) => event.type === "tool_execution_end") as unknown as ToolEnd[];
    const monitor = ends.find((end) => end.toolName === "monitor_start");
    expect(monitor?.result.details.result, JSON.stringify(monitor?.result.content)).toMatchObject({
      status: "success",
      captures: { n: "42" },
    });
    const shell = ends.find((end) => end.toolName === "exec_command");
    const shellText = shell?.result.content.map((block) => block.text ?? "").join("") ?? "";
    // `tty` succeeds only when stdin is a terminal: the job really ran in a PTY.
    expect(shellText).toMatch(/Process exited with code 0/);
    expect(shellText).toMatch(/TTY-OK/);
    return loads.files();
  } finally {
    removeDir(dir);
  }
}

/** pi-jobs' own files among `files` (its dependencies aside), relative to the package. */
function ownFiles(files: string[], pkgDir: string): string[] {
  return files.flatMap((file) => {
    const rel = inside(pkgDir, file);
    return rel === undefined || rel.startsWith(`node_modules${sep}`) ? [] : [rel.split(sep).join("/")];
  });
}

type WorkerForm = "compiled" | "source";

/** Compiled (dist/**.js or .cjs) or TypeScript source (actors/, mailbox/, shared/); any other file of pi-jobs is its name. */
function formOf(file: string): WorkerForm | string {
  if (/^dist\/.*\.c?js$/.test(file)) return "compiled";
  if (/^(actors|mailbox|shared)\/.*\.ts$/.test(file)) return "source";
  return file;
}

/**
 * The workers ran from the installed copy, whole: every file a worker loaded lies under `root` (the install
 * location with its dependencies), the job actor among them (compiled, inside the bundled thread entry, which the threads
 * run through `cached-entry.cjs`), and pi-jobs' own files are all of one form.
 */
function expectWorkersFrom(files: string[], pkgDir: string, root: string): { own: string[]; form: WorkerForm } {
  expect(files.filter((file) => inside(root, file) === undefined), `worker files outside ${root}`).toEqual([]);
  const own = ownFiles(files, pkgDir);
  // Compiled, the job actor is bundled into the thread's entry (scripts/build.ts), which its loader runs.
  expect(own.some((file) => /^(actors\/job\/actor\.ts|dist\/actors\/thread\/cached-entry\.cjs)$/.test(file)), own.join("\n")).toBe(true);
  const forms = [...new Set(own.map(formOf))];
  expect([["compiled"], ["source"]], `forms of the worker files: ${forms.join(", ")}`).toContainEqual(forms);
  return { own, form: forms[0] as WorkerForm };
}

function settingsPackages(agentDir: string): unknown[] {
  return (JSON.parse(readFileSync(join(agentDir, "settings.json"), "utf8")) as { packages?: unknown[] }).packages ?? [];
}

describe("pi install git:", () => {
  let dir: string;
  let agentDir: string;
  let pkgDir: string;
  let source: string;

  beforeAll(async () => {
    dir = makeTempDir("git-install");
    agentDir = join(dir, "agent");
    mkdirSync(agentDir);
    const remote = await gitRemoteOfWorkingTree(dir);
    source = remote.source;
    // Pi clones, then runs `npm install --omit=dev --legacy-peer-deps --no-audit --no-fund` in the clone.
    await piInstall(source, agentDir, { env: remote.env });
    pkgDir = gitInstallPath(agentDir, "github.com/pi-jobs-e2e/pi-jobs");
  }, INSTALL_TIMEOUT_MS);

  afterAll(() => {
    if (dir !== undefined) removeDir(dir);
  });

  test("clones outside node_modules and installs the runtime dependencies only, with no build step", () => {
    expect(settingsPackages(agentDir)).toEqual([source]);
    expect(pkgDir.split(sep)).not.toContain("node_modules");
    expect(existsSync(join(pkgDir, "dist")), "a build ran in the clone").toBe(false);
    for (const dependency of ["piscina", "comlink", "@lydell/node-pty"]) {
      expect(existsSync(join(pkgDir, "node_modules", dependency, "package.json")), dependency).toBe(true);
    }
    // Neither devDependencies nor host-provided peers: the workers must do without them.
    for (const absent of ["typescript", "typebox", "@earendil-works/pi-coding-agent"]) {
      expect(existsSync(join(pkgDir, "node_modules", absent)), absent).toBe(false);
    }
  });

  test("real Pi runs a monitor to success and a PTY job, with the clone's workers", async () => {
    const { own } = expectWorkersFrom(await runJobs(agentDir), pkgDir, agentDir);
    // No devDependencies means no schema checks: the workers never reach for TypeBox.
    expect(own).not.toContain("mailbox/check.ts");
  }, RUN_TIMEOUT_MS);
});

describe("pi install ./path of a checkout", () => {
  let agentDir: string;

  beforeAll(async () => {
    agentDir = makeTempDir("local-install");
    await piInstall(`./${basename(REPO_ROOT)}`, agentDir, { cwd: dirname(REPO_ROOT) });
  }, INSTALL_TIMEOUT_MS);

  afterAll(() => {
    if (agentDir !== undefined) removeDir(agentDir);
  });

  test("records the checkout itself, nothing copied", () => {
    const packages = settingsPackages(agentDir);
    expect(packages).toHaveLength(1);
    expect(resolve(agentDir, packages[0] as string)).toBe(REPO_ROOT);
    for (const managed of ["git", "npm"]) expect(existsSync(join(agentDir, managed)), managed).toBe(false);
  });

  test("real Pi runs a monitor to success and a PTY job, with the checkout's workers", async () => {
    const { own } = expectWorkersFrom(await runJobs(agentDir), REPO_ROOT, REPO_ROOT);
    // Even where TypeBox is at hand, worker threads leave the schema checks to the host's end of the mailbox, which
    // checks every message in both directions (docs/decisions/mailbox-checks.md): a thread never compiles them.
    expect(own).not.toContain("mailbox/check.ts");
  }, RUN_TIMEOUT_MS);
});

/** The sources `npm run build` bundles each into one CommonJS file (scripts/build.ts). */
const BUNDLED = new Set(["actors/thread/actor-thread.ts", "actors/thread/cached-entry.ts"]);

/**
 * `<folder>/x/y.ts` → `x/y.js`, for every TypeScript source (declarations aside); the actor thread's entry and its
 * loader → their CommonJS bundles, `thread/actor-thread.cjs` and `thread/cached-entry.cjs`.
 */
function compiledNames(folder: string): string[] {
  return filesUnder(join(REPO_ROOT, folder), ".ts")
    .filter((file) => !file.endsWith(".d.ts"))
    .map((file) => file.replace(/\.ts$/, BUNDLED.has(`${folder}/${file}`) ? ".cjs" : ".js"));
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

describe("pi install npm: of the packed tarball", () => {
  let installed: PackedInstall;

  beforeAll(async () => {
    installed = await packAndInstall();
  }, PACK_TIMEOUT_MS);

  afterAll(async () => {
    await removePackedInstall();
  });

  test("real Pi runs a monitor to success and a PTY job, with compiled workers from dist/", async () => {
    const { form } = expectWorkersFrom(await runJobs(installed.agentDir), installed.pkgDir, installed.agentDir);
    expect(form, "under node_modules only compiled workers can run").toBe("compiled");
  }, RUN_TIMEOUT_MS);

  test("ships a compiled dist/<folder>/ file for every actors/, mailbox/ and shared/ source", () => {
    for (const folder of ["actors", "mailbox", "shared"]) {
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
    // Only the mailbox's schemas and their checks use it: workers import nothing of them but types, and the host loads
    // the checks only when they are on.
    const devOnly = new Set(
      ["check", "spec", "output", "result", "messages", "control", "monitor", "nullable", "evidence"].map((name) => `dist/mailbox/${name}.js`),
    );
    const graph = productionGraph(installed.pkgDir, ["dist/actors/thread/cached-entry.cjs", "dist/actors/thread/actor-thread.cjs", "dist/actors/job/actor.js", "dist/actors/match/regex-sandbox.js"]);
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

  test("a monitor whose pattern needs the regex sandbox starts it from the installed dist/", async () => {
    // A backreference cannot run in V8's linear-time engine, so every line goes to the sandbox thread, which the
    // actor thread's bundled entry starts: its path must resolve from the bundle's place under dist/.
    const run = await runPrint("go", {
      extensions: [installed.pkgDir],
      steps: [
        { toolCalls: [{ name: "monitor_start", arguments: { command: "echo abc=xyz; echo abc=abc", result_pattern: "^(\\w+)=\\1$" } }] },
        { text: "{{last}}" },
      ],
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).not.toMatch(/matcher_error|regex sandbox/);
    expect(run.stdout).toMatch(/status=success/);
    expect(run.stdout).toMatch(/abc=abc/);
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
