/**
 * pi-jobs as a user gets it from npm: `npm pack` of the repository (whose `prepack` compiles the workers into dist/),
 * installed by real `pi install npm:pi-jobs@file:<tarball>` into a fresh agent dir. Pi runs
 * `npm install <spec> --prefix <agent>/npm --legacy-peer-deps`, so the host-provided peers (Pi, pi-tui, typebox)
 * are NOT installed, exactly as under `pi install npm:pi-jobs` once the package is published.
 *
 * The pack runs in a copy of the working tree (sources only, node_modules linked) so that a stale dist/ in the
 * checkout can never stand in for a build that no longer produces a file, and the checkout is not written to.
 */
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { npmInstallPath, piInstall } from "./install.ts";
import { makeTempDir, NODE22, node22Path, removeDir, REPO_ROOT } from "./paths.ts";

export interface PackedInstall {
  /** Temp dir holding everything; removed by `removePackedInstall`. */
  dir: string;
  /** The agent dir Pi installed into (its settings name the package). */
  agentDir: string;
  /** The installed package: `<agentDir>/npm/node_modules/pi-jobs`. */
  pkgDir: string;
  /** The tarball `npm pack` produced. */
  tarball: string;
}

const NPM_TIMEOUT_MS = 240_000;
/** Top-level entries of the checkout that are not sources (dist/ especially must come from a fresh build). */
const NOT_COPIED = new Set(["node_modules", ".git", "dist"]);

let cached: Promise<PackedInstall> | undefined;

function npm(args: string[], cwd: string): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolveRun, reject) => {
    execFile(
      "npm",
      args,
      {
        cwd,
        // Node 22 first: `prepack` runs tsc, and packing (a developer's step) may not depend on the system node.
        env: { ...process.env, PATH: node22Path(), CI: "true", npm_config_update_notifier: "false" },
        timeout: NPM_TIMEOUT_MS,
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`npm ${args.join(" ")} failed in ${cwd}: ${error.message}\n${stderr}\n${stdout}`));
        else resolveRun({ stdout, stderr });
      },
    );
  });
}

async function build(): Promise<PackedInstall> {
  const dir = makeTempDir("pack");
  try {
    const source = join(dir, "source");
    cpSync(REPO_ROOT, source, {
      recursive: true,
      filter: (path) => {
        const rel = relative(REPO_ROOT, path);
        return !NOT_COPIED.has(rel.split(sep)[0] ?? "") && !rel.endsWith(".tgz");
      },
    });
    symlinkSync(join(REPO_ROOT, "node_modules"), join(source, "node_modules"), "dir");

    const packs = join(dir, "packs");
    mkdirSync(packs);
    await npm(["pack", "--pack-destination", packs, "--no-audit", "--no-fund"], source);
    const tarballs = readdirSync(packs).filter((name) => name.endsWith(".tgz"));
    if (tarballs.length !== 1) throw new Error(`npm pack produced ${tarballs.length} tarballs: ${tarballs.join(", ")}`);
    const tarball = join(packs, tarballs[0] as string);

    const agentDir = join(dir, "agent");
    mkdirSync(agentDir);
    const name = (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { name: string }).name;
    // An npm spec Pi understands (name@range) whose range npm reads as the local tarball.
    await piInstall(`npm:${name}@file:${tarball}`, agentDir);
    const pkgDir = npmInstallPath(agentDir, name);
    if (!existsSync(join(pkgDir, "package.json"))) throw new Error(`pi install left no ${pkgDir}`);
    return { dir, agentDir, pkgDir, tarball };
  } catch (error) {
    removeDir(dir);
    throw error;
  }
}

/** Packs and installs once per test process; later calls get the same install. */
export function packAndInstall(): Promise<PackedInstall> {
  if (cached === undefined) {
    const attempt = build();
    cached = attempt;
    // A failed build is not cached: the next caller gets a fresh attempt and its own error.
    attempt.catch(() => {
      if (cached === attempt) cached = undefined;
    });
  }
  return cached;
}

/** Removes the cached install (call from afterAll). */
export async function removePackedInstall(): Promise<void> {
  const pending = cached;
  cached = undefined;
  if (pending === undefined) return;
  try {
    removeDir((await pending).dir);
  } catch {
    // The build failed and cleaned up after itself.
  }
}

/** Every file under `dir` (recursively) whose name ends with `suffix`, relative to `dir`. */
export function filesUnder(dir: string, suffix: string): string[] {
  if (!existsSync(dir)) return [];
  const found: string[] = [];
  for (const entry of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
    if (entry.endsWith(suffix) && statSync(join(dir, entry)).isFile()) found.push(entry);
  }
  return found.sort();
}

/** Static and literal dynamic import specifiers of an ES module as tsc emits it. */
export function importSpecifiers(code: string): string[] {
  const patterns = [
    /\bfrom\s*["']([^"']+)["']/g,
    /^\s*import\s*["']([^"']+)["']/gm,
    /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
  ];
  const specifiers = new Set<string>();
  for (const pattern of patterns) for (const match of code.matchAll(pattern)) specifiers.add(match[1] as string);
  return [...specifiers];
}

export interface UnresolvedImport {
  file: string;
  specifier: string;
  error: string;
}

/**
 * Imports in `pkgDir`'s compiled JavaScript that Node cannot resolve from where the package is installed.
 * Worker threads load these files with plain Node: Pi's aliasing of `typebox` and `@earendil-works/*` does not
 * reach them, so every package they import must be a real dependency of pi-jobs.
 */
export async function unresolvedImports(pkgDir: string, subdir = "dist"): Promise<UnresolvedImport[]> {
  const root = join(pkgDir, subdir);
  const problems: UnresolvedImport[] = [];
  const bare: { file: string; parent: string; specifier: string }[] = [];
  for (const rel of filesUnder(root, ".js")) {
    const file = join(root, rel);
    for (const specifier of importSpecifiers(readFileSync(file, "utf8"))) {
      if (specifier.startsWith("node:")) continue;
      if (specifier.startsWith(".") || specifier.startsWith("/")) {
        const target = resolve(dirname(file), specifier);
        if (!existsSync(target)) problems.push({ file: join(subdir, rel), specifier, error: "file missing" });
      } else {
        bare.push({ file: join(subdir, rel), parent: pathToFileURL(file).href, specifier });
      }
    }
  }
  if (bare.length === 0) return problems;
  // Node's own ESM resolver, run from the installed location (import.meta.resolve with a parent URL).
  const script = `
    const checks = JSON.parse(process.argv[1]);
    const failed = [];
    for (const check of checks) {
      try { import.meta.resolve(check.specifier, check.parent); }
      catch (error) { failed.push({ file: check.file, specifier: check.specifier, error: String(error.code ?? error.message) }); }
    }
    process.stdout.write(JSON.stringify(failed));`;
  const stdout = await new Promise<string>((resolveRun, reject) => {
    execFile(
      NODE22,
      ["--experimental-import-meta-resolve", "--no-warnings", "--input-type=module", "-e", script, JSON.stringify(bare)],
      { cwd: pkgDir, timeout: 60_000 },
      (error, out, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolveRun(out)),
    );
  });
  return [...problems, ...(JSON.parse(stdout) as UnresolvedImport[])];
}
