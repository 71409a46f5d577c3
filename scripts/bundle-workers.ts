/**
 * Bundles the job actor's thread into one file, dist/actors/thread/actor-thread.js, replacing the per-module output of tsc
 * there. Every thread loads its entry when it starts, and resolving, reading and compiling ~20 modules was a good part
 * of what a thread costs beyond Node's own worker start (docs/decisions.md, "A lean worker entry").
 *
 * Packages stay external: node-pty is native, comlink is loaded with `createRequire`, and each is resolved from the
 * installed package as before. A module a thread loads only on demand stays a separate file (tsc's output beside the
 * bundle), so that what it imports is still loaded only then: the terminal emulator (PTY jobs). The mailbox's schemas
 * (TypeBox, which an installed copy's threads must never need) are never loaded by a thread at all: it imports only
 * their types.
 */
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";

const root = fileURLToPath(new URL("../", import.meta.url));

/** Modules imported with `import()` for their heavy dependencies: kept out of the bundle, loaded from dist/ as compiled. */
const LOADED_ON_DEMAND = /\/terminal-text\.ts$/;

const ENTRY = "actors/thread/actor-thread.ts";
const OUTFILE = `dist/${ENTRY.replace(/\.ts$/, ".js")}`;

/**
 * The import is written from the bundle's place, not the importer's: the importer's code moves into the bundle, whose
 * folder may differ (`actors/thread/` importing what `actors/output/` loads), while tsc's output keeps the source's
 * relative layout under dist/.
 */
const onDemandStaysSeparate: Plugin = {
  name: "on-demand-modules-stay-separate",
  setup(context) {
    context.onResolve({ filter: LOADED_ON_DEMAND }, (args) => {
      if (args.kind !== "dynamic-import") return undefined;
      const source = relative(root, resolve(args.resolveDir, args.path));
      const compiled = join(root, "dist", source.replace(/\.ts$/, ".js"));
      let path = relative(dirname(join(root, OUTFILE)), compiled).split(sep).join("/");
      if (!path.startsWith(".")) path = `./${path}`;
      return { path, external: true };
    });
  },
};

export async function bundleWorkers(): Promise<void> {
  await build({
    absWorkingDir: root,
    entryPoints: [ENTRY],
    outfile: OUTFILE,
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
