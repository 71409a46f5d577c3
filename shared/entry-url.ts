/**
 * Where a worker thread's or the spawner process's entry point lives. In a checkout or a git install (a clone outside node_modules), workers load from
 * their TypeScript source (Node strips the types). Under node_modules Node refuses to strip types, so a package
 * installed from npm runs the JavaScript that `npm run build` (run by `prepack`) compiled into dist/ with the same
 * relative layout.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { workersFromDist } from "./config.ts";

const here = new URL(".", import.meta.url);
const compiled = here.pathname.includes("/dist/");
const underNodeModules = fileURLToPath(here).split(/[\\/]/).includes("node_modules");

/** URL of the module `<folder>/<name>` that a new thread or process starts from, for the way this copy is running. */
function entryUrl(folder: "actors" | "spawner", name: string): URL {
  if (compiled) return new URL(`../${folder}/${name}.js`, here);
  const source = new URL(`../${folder}/${name}.ts`, here);
  if (!underNodeModules && !workersFromDist(process.env)) return source;
  const built = new URL(`../dist/${folder}/${name}.js`, here);
  if (existsSync(fileURLToPath(built))) return built;
  throw new Error(
    `pi-jobs: compiled module dist/${folder}/${name}.js is missing; run "npm run build" in the pi-jobs package`,
  );
}

/** URL of the worker module `actors/<name>`. */
export function workerUrl(name: string): URL {
  return entryUrl("actors", name);
}

/** URL of the spawner process's entry (spawner/spawner.ts). */
export function spawnerUrl(): URL {
  return entryUrl("spawner", "spawner");
}
