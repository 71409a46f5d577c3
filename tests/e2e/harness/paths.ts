/**
 * Where things are for the end-to-end harness, and the environment every real Pi run gets. Pi needs Node >= 22.19
 * while the system node may be older, so the repository's own Node 22 (node_modules/.bin) goes first on PATH.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = resolve(fileURLToPath(new URL("../../..", import.meta.url)));
export const BIN_DIR = join(REPO_ROOT, "node_modules", ".bin");
export const NODE22 = join(BIN_DIR, "node");
export const PI_CLI = join(BIN_DIR, "pi");
/** The product's entry point, as `pi -e` and the SDK loader see it. */
export const PI_JOBS_ENTRY = join(REPO_ROOT, "index.ts");
export const FAUX_PROVIDER_ENTRY = join(REPO_ROOT, "tests", "fixtures", "faux-provider.ts");

/** A fresh directory under the system temp dir; the caller removes it with `removeDir`. */
export function makeTempDir(label: string): string {
  return mkdtempSync(join(tmpdir(), `pi-jobs-${label}-`));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}

/** PATH with the repository's Node 22 first. */
export function node22Path(basePath = process.env.PATH ?? ""): string {
  return basePath === "" ? BIN_DIR : `${BIN_DIR}${delimiter}${basePath}`;
}

/**
 * Environment for a real Pi process: an isolated agent dir (never the user's ~/.pi), no downloads, no version
 * check, no telemetry, Node 22 first on PATH, and the faux script when one is given.
 */
export function piEnv(agentDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // A developer's provider keys must not make a test talk to a real model.
  for (const key of Object.keys(env)) if (/_API_KEY$|^ANTHROPIC_|^OPENAI_/.test(key)) delete env[key];
  // Nor may the user's own session or package locations leak in.
  delete env.PI_CODING_AGENT_SESSION_DIR;
  delete env.PI_PACKAGE_DIR;
  return {
    ...env,
    PATH: node22Path(env.PATH),
    PI_CODING_AGENT_DIR: agentDir,
    PI_OFFLINE: "1",
    PI_SKIP_VERSION_CHECK: "1",
    PI_TELEMETRY: "0",
    ...extra,
  };
}
