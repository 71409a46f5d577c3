/**
 * What a packed pi-jobs holds: its files, the imports of its compiled JavaScript, and which of those Node cannot
 * resolve from where the package is installed. The install itself is tests/fixtures/packed-install.ts.
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { NODE22 } from "./paths.ts";

/** Every file under `dir` (recursively) whose name ends with `suffix`, relative to `dir`. */
export function filesUnder(dir: string, suffix: string): string[] {
  if (!existsSync(dir)) return [];
  const found: string[] = [];
  for (const entry of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
    if (entry.endsWith(suffix) && statSync(join(dir, entry)).isFile()) found.push(entry);
  }
  return found.sort();
}

/**
 * Static and literal dynamic import specifiers, and literal `require()`s, of a module as the build (scripts/build.ts)
 * emits it: ES modules, and the actor thread's CommonJS bundle.
 */
export function importSpecifiers(code: string): string[] {
  const patterns = [
    /\bfrom\s*["']([^"']+)["']/g,
    /^\s*import\s*["']([^"']+)["']/gm,
    /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
    /\brequire\s*\(\s*["']([^"']+)["']\s*\)/g,
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
  for (const rel of [...filesUnder(root, ".js"), ...filesUnder(root, ".cjs")]) {
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
