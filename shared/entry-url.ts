/**
 * Where a worker thread's or the spawner process's entry point lives. In a checkout or a git install (a clone outside node_modules), workers load from
 * their TypeScript source (Node strips the types). Under node_modules Node refuses to strip types, so a package
 * installed from npm runs the JavaScript that `npm run build` (run by `prepack`) compiled into dist/ with the same
 * relative layout.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { workersFromDist } from "./config.ts";

/**
 * The package's root, from the URL of the module running this code. Compiled code (JavaScript) lies under the
 * package's dist/, the last such folder in its path, but not always at this file's depth: it also runs bundled into
 * the actor thread's entry (dist/actors/thread/actor-thread.cjs), where `import.meta.url` is the bundle's. Source
 * (TypeScript) is this very file, one folder below the root.
 */
export function packageRootOf(moduleUrl: string): { root: URL; compiled: boolean } {
  if (!/\.c?js$/.test(moduleUrl)) return { root: new URL("../", moduleUrl), compiled: false };
  const dist = moduleUrl.lastIndexOf("/dist/");
  if (dist < 0) throw new Error(`pi-jobs: compiled module ${moduleUrl} is not under a dist/ folder`);
  return { root: new URL(moduleUrl.slice(0, dist + 1)), compiled: true };
}

const { root, compiled } = packageRootOf(import.meta.url);
const underNodeModules = fileURLToPath(root).split(/[\\/]/).includes("node_modules");

/**
 * The entry `npm run build` bundles into one CommonJS file (scripts/build.ts), which a compiled copy's threads load
 * through `cached-entry.cjs` (actors/thread/cached-entry.ts); every other module compiles to `.js`.
 */
const BUNDLED_ENTRY = "actors/thread/actor-thread";
const BUNDLE_LOADER = "actors/thread/cached-entry.cjs";

/** URL of the module `<folder>/<name>` that a new thread or process starts from, for the way this copy is running. */
function entryUrl(folder: "actors" | "spawner", name: string): URL {
  const source = `${folder}/${name}`;
  const built = `dist/${source === BUNDLED_ENTRY ? BUNDLE_LOADER : `${source}.js`}`;
  const builtUrl = new URL(built, root);
  if (compiled) return builtUrl;
  if (!underNodeModules && !workersFromDist(process.env)) return new URL(`${source}.ts`, root);
  if (existsSync(fileURLToPath(builtUrl))) return builtUrl;
  throw new Error(`pi-jobs: compiled module ${built} is missing; run "npm run build" in the pi-jobs package`);
}

/** URL of the worker module `actors/<name>`. */
export function workerUrl(name: string): URL {
  return entryUrl("actors", name);
}

/** URL of the spawner process's entry (spawner/spawner.ts). */
export function spawnerUrl(): URL {
  return entryUrl("spawner", "spawner");
}

/** URL of the perl spawner (spawner/spawner.pl): perl runs it as it is, from every copy. */
export function perlSpawnerUrl(): URL {
  return new URL("spawner/spawner.pl", root);
}

/** URL of a persisted job's perl program (spawner/keeper.pl, spawner/follow.pl): perl runs it as it is, from every copy. */
export function persistProgramUrl(name: "keeper" | "follow"): URL {
  return new URL(`spawner/${name}.pl`, root);
}
