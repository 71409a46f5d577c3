/**
 * `npm start`: Pi with pi-jobs loaded, its worker threads and spawner running the JavaScript compiled into dist/ as an
 * installed copy's do, compiled first when their sources changed since the last build
 * (docs/decisions/npm-start.md); PI_JOBS_WORKERS, when set, chooses instead.
 *
 * With model credentials (a provider API key in the environment, or Pi's own auth/models files), Pi starts as usual
 * with the user's models. Without any, it starts the bundled demo model, a clearly labelled scripted tour, so a
 * newcomer sees pi-jobs work in the real TUI with no API key.
 * PI_JOBS_DEMO=1 forces the demo, PI_JOBS_DEMO=0 never uses it (host/config.ts).
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { demoForced } from "../host/config.ts";
import { readSwitch, WORKERS_SWITCH } from "../shared/config.ts";
import { DEMO_MODEL, DEMO_PROVIDER } from "./extension.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Provider credentials Pi would find: API keys in the environment, or saved auth and custom models. */
export function hasCredentials(env: NodeJS.ProcessEnv = process.env, agentDir = env.PI_CODING_AGENT_DIR ?? join(homedir(), ".pi", "agent")): boolean {
  const keyed = Object.entries(env).some(
    ([key, value]) => value !== undefined && value !== "" && (/_API_KEY$/.test(key) || /^(ANTHROPIC_OAUTH_TOKEN|AWS_PROFILE|AWS_ACCESS_KEY_ID|GOOGLE_APPLICATION_CREDENTIALS)$/.test(key)),
  );
  if (keyed) return true;
  for (const file of ["auth.json", "models.json"]) {
    const path = join(agentDir, file);
    if (!existsSync(path)) continue;
    try {
      const parsed: unknown = JSON.parse(readFileSync(path, "utf8"));
      if (typeof parsed === "object" && parsed !== null && Object.keys(parsed).length > 0) return true;
    } catch {
      return true; // a file Pi may read differently: do not hide the user's setup behind the demo
    }
  }
  return false;
}

export function piArguments(demo: boolean, extra: readonly string[]): string[] {
  const args = ["-e", ROOT];
  if (demo) {
    args.push("-e", join(ROOT, "demo", "extension.ts"), "--model", `${DEMO_PROVIDER}/${DEMO_MODEL}`);
    if (extra.length === 0) args.push("Show me what pi-jobs does.");
  }
  return [...args, ...extra];
}

/**
 * Pi's environment with the workers it should run: the compiled ones, built first if dist/ is older than their
 * sources. Where they cannot be built (a development dependency missing), the workers run from source, as they would
 * without `npm start`, and the user is told why.
 */
export async function workersEnvironment(env: NodeJS.ProcessEnv): Promise<NodeJS.ProcessEnv> {
  if (readSwitch(env, WORKERS_SWITCH) !== null) return env;
  try {
    const { buildWorkers, needsBuild } = await import("../scripts/build.ts");
    if (needsBuild()) {
      process.stderr.write("pi-jobs: compiling the workers into dist/ (none yet, or older than their sources)\n");
      await buildWorkers({ clean: false });
    }
    return { ...env, [WORKERS_SWITCH[0]]: "dist" };
  } catch (error) {
    process.stderr.write(`pi-jobs: the workers could not be compiled, so they run from source: ${(error as Error).message}\n`);
    return env;
  }
}

async function main(): Promise<void> {
  const demo = demoForced(process.env) ?? !hasCredentials();
  if (demo) {
    process.stderr.write(
      "pi-jobs: no model credentials found, starting the bundled DEMO model (a scripted tour, not an AI).\n" +
        "         Set up a provider (e.g. an API key) to use your own models; PI_JOBS_DEMO=0 disables the demo.\n",
    );
  }
  const pi = join(ROOT, "node_modules", ".bin", "pi");
  const env = await workersEnvironment(process.env);
  const child = spawn(process.execPath, [existsSync(pi) ? pi : "pi", ...piArguments(demo, process.argv.slice(2))], { stdio: "inherit", env });
  child.on("exit", (code, signal) => {
    if (signal !== null) process.kill(process.pid, signal);
    else process.exit(code ?? 0);
  });
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
