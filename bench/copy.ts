/**
 * The two copies of pi-jobs the lifecycle, start, memory and data-plane benchmarks compare, each loaded the way Pi
 * loads an extension (through jiti, with the options Pi 1.6 gives it), so that where the copy lies is all that
 * differs:
 * - checkout: this repository, as `npm start` runs it: Pi transforms the host code from its TypeScript source, and
 *   worker threads run the checkout's compiled dist/, built first when their sources changed (demo/start.ts); with
 *   PI_JOBS_WORKERS set, as it says (`source`: Node strips the types of actors/, mailbox/ and shared/ in every thread);
 * - installed: the package as a user installs it (bench/installed.ts). Under node_modules its workers run its own
 *   compiled dist/ (shared/entry-url.ts), and its host code resolves its dependencies from the install.
 */
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { createJiti } from "jiti";
import type { workerUrl } from "../shared/entry-url.ts";
import type { createJobRuntime, RuntimeOptions, SupervisedRuntime } from "../host/runtime/runtime.ts";
import type { ShellService } from "../host/shell/service.ts";
import type { createShellState } from "../host/shell/state.ts";
import { workersEnvironment } from "../demo/start.ts";
import { readSwitch, WORKERS_SWITCH, workersFromDist } from "../shared/config.ts";
import { installedRuntime } from "../tests/fixtures/jobs.ts";
import { installedPackage } from "./installed.ts";

export const COPIES = ["checkout", "installed"] as const;
export type Copy = (typeof COPIES)[number];

/** The host code the benchmarks drive. */
interface HostCode {
  createJobRuntime: typeof createJobRuntime;
  ShellService: typeof ShellService;
  createShellState: typeof createShellState;
  workerUrl: typeof workerUrl;
}

/** The file of a copy each piece of host code comes from. */
const HOST_FILES: Record<keyof HostCode, string> = {
  createJobRuntime: "host/runtime/runtime.ts",
  ShellService: "host/shell/service.ts",
  createShellState: "host/shell/state.ts",
  workerUrl: "shared/entry-url.ts",
};

/** The bundle (dist/actors/thread/actor-thread.cjs) through the code cache's loader. */
const COMPILED_ENTRY = "dist/actors/thread/cached-entry.cjs";

/** Whether the checkout's threads run compiled code: as `npm start` runs them, unless PI_JOBS_WORKERS says otherwise. */
function checkoutCompiled(): boolean {
  return readSwitch(process.env, WORKERS_SWITCH) === null || workersFromDist(process.env);
}

/** Where a copy's actor threads must load their entry from, relative to the copy. */
function actorEntry(copy: Copy): string {
  return copy === "checkout" && !checkoutCompiled() ? "actors/thread/actor-thread.ts" : COMPILED_ENTRY;
}

export interface LoadedCopy extends HostCode {
  copy: Copy;
  /** A runtime of this copy, configured as tests/fixtures/jobs.ts configures one (schema checks off). */
  runtime(options?: RuntimeOptions): SupervisedRuntime;
}

const CHECKOUT_ROOT = fileURLToPath(new URL("../", import.meta.url));

/**
 * Pi's extension loader on Node (core/extensions/loader.js of Pi 1.6): `createJiti(<its own module>, { moduleCache:
 * false, alias })`, the aliases pointing the host-provided packages at Pi's own copies. Of those, the host code
 * measured here imports TypeBox alone (a peer, so the installed copy does not carry it); an import of another would
 * fail loudly rather than find a different copy. The transform cache is off: it saves load time only, which nothing
 * here measures, and would leave files in the system temp dir.
 */
function piJiti(): ReturnType<typeof createJiti> {
  const pi = import.meta.resolve("@earendil-works/pi-coding-agent");
  const fromPi = createRequire(pi);
  const alias = Object.fromEntries(["typebox", "typebox/compile", "typebox/value"].map((id) => [id, fromPi.resolve(id)]));
  return createJiti(pi, { moduleCache: false, alias, fsCache: false });
}

/**
 * A copy's host code as one module graph, as Pi loads an extension's entry and everything it imports: a module held
 * in memory re-exports the host files, so they share the modules they import.
 */
async function hostCode(root: string): Promise<HostCode> {
  const source = Object.entries(HOST_FILES)
    .map(([name, file]) => `export { ${name} } from ${JSON.stringify(join(root, file))};`)
    .join("\n");
  return (await piJiti().evalModule(source, { filename: join(root, "bench-host-code.ts"), async: true })) as HostCode;
}

async function load(copy: Copy): Promise<LoadedCopy> {
  if (copy === "checkout") Object.assign(process.env, await workersEnvironment(process.env));
  const root = copy === "checkout" ? CHECKOUT_ROOT : await installedPackage();
  const code = await hostCode(root);
  const entry = relative(root, fileURLToPath(code.workerUrl("thread/actor-thread")));
  if (entry !== actorEntry(copy)) throw new Error(`the ${copy} copy's actor threads would load ${entry}, not ${actorEntry(copy)}`);
  return { ...code, copy, runtime: (options = {}) => installedRuntime(options, code.createJobRuntime) };
}

const loaded = new Map<Copy, Promise<LoadedCopy>>();

/** A copy's host code, loaded once per process. */
export function loadCopy(copy: Copy): Promise<LoadedCopy> {
  let pending = loaded.get(copy);
  if (pending === undefined) {
    pending = load(copy);
    loaded.set(copy, pending);
  }
  return pending;
}

/** What a row says about the copy it measured. */
export function copyLabel(copy: Copy): string {
  if (copy === "installed") return "installed (npm pack, compiled workers)";
  return checkoutCompiled() ? "checkout (npm start, compiled workers)" : "checkout (TypeScript workers)";
}

/** The copy a child process is told to measure (`--copy=checkout|installed`). */
export function copyArgument(argv: readonly string[] = process.argv): Copy {
  const value = argv.find((arg) => arg.startsWith("--copy="))?.slice("--copy=".length);
  if (!(COPIES as readonly (string | undefined)[]).includes(value)) throw new Error(`--copy must be one of ${COPIES.join(", ")}; got ${value ?? "nothing"}`);
  return value as Copy;
}
