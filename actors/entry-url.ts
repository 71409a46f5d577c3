/**
 * Where a worker entry point lives. In a checkout or a git install (a clone outside node_modules), workers load from
 * their TypeScript source (Node strips the types). Under node_modules Node refuses to strip types, so a package
 * installed from npm runs the JavaScript that `npm run build` (run by `prepack`) compiled into dist/ with the same
 * relative layout.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const here = new URL(".", import.meta.url);
const compiled = here.pathname.includes("/dist/");
const underNodeModules = fileURLToPath(here).split(/[\\/]/).includes("node_modules");

/** URL of the worker module `actors/<name>` for the way this copy of pi-jobs is running. */
export function workerUrl(name: string): URL {
  if (compiled) return new URL(`./${name}.js`, here);
  const source = new URL(`./${name}.ts`, here);
  if (!underNodeModules && process.env.PI_JOBS_WORKERS !== "dist") return source;
  const built = new URL(`../dist/actors/${name}.js`, here);
  if (existsSync(fileURLToPath(built))) return built;
  throw new Error(
    `pi-jobs: compiled worker dist/actors/${name}.js is missing; run "npm run build" in the pi-jobs package`,
  );
}
