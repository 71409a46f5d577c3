/**
 * Bundles the job actor's thread into one file, dist/actors/thread/actor-thread.js, replacing the per-module output of tsc
 * there. Every thread loads its entry when it starts, and resolving, reading and compiling ~20 modules was a good part
 * of what a thread costs beyond Node's own worker start (docs/decisions.md, "A lean worker entry").
 *
 * Packages stay external: node-pty is native, comlink is loaded with `createRequire`, and each is resolved from the
 * installed package as before. The modules a thread loads only on demand stay separate files (tsc's output beside the
 * bundle), so that what they import is still loaded only then: the terminal emulator (PTY jobs) and the mailbox checks
 * (TypeBox, which an installed copy's threads must never need).
 */
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";

const root = fileURLToPath(new URL("../", import.meta.url));

/** Modules imported with `import()` for their heavy dependencies: kept out of the bundle, loaded from dist/ as compiled. */
const LOADED_ON_DEMAND = /\/(terminal-text|check)\.ts$/;

const onDemandStaysSeparate: Plugin = {
  name: "on-demand-modules-stay-separate",
  setup(context) {
    context.onResolve({ filter: LOADED_ON_DEMAND }, (args) => {
      if (args.kind !== "dynamic-import") return undefined;
      return { path: args.path.replace(/\.ts$/, ".js"), external: true };
    });
  },
};

export async function bundleWorkers(): Promise<void> {
  await build({
    absWorkingDir: root,
    entryPoints: ["actors/thread/actor-thread.ts"],
    outfile: "dist/actors/thread/actor-thread.js",
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    packages: "external",
    plugins: [onDemandStaysSeparate],
    logLevel: "warning",
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundleWorkers();
