/**
 * `npm run build`: the JavaScript that worker threads and the spawner run where Node strips no types (under
 * node_modules), and that `npm start` runs in a checkout (docs/decisions/npm-start.md).
 *
 * Two esbuild passes, well under a second together:
 * 1. every source file of actors/, mailbox/, shared/ and spawner/ to dist/ with the same relative layout, one output
 *    file per source file, its relative imports renamed from .ts to .js. The sources use only erasable TypeScript
 *    (tsconfig.json: erasableSyntaxOnly, verbatimModuleSyntax), so this is type stripping, as Node itself does it;
 *    `npm run typecheck` checks the types.
 * 2. the job actor's thread entry bundled into one CommonJS file, dist/actors/thread/actor-thread.cjs (the entry has no
 *    pass-1 output). Every thread loads its entry when it starts, and resolving, reading and compiling ~20 modules was
 *    a good part of what a thread costs beyond Node's own worker start; piscina loads the entry with require(), which
 *    loads CommonJS without starting the thread's ES module loader (docs/decisions/bundled-entry.md).
 *    Packages stay external, resolved from the installed package (node-pty is native), except comlink: every thread
 *    runs it, and inside the bundle it compiles from the shared code cache with the rest. A module a thread loads only
 *    on demand stays a separate file (its pass-1 output), so that what it imports is still loaded only then: the
 *    terminal emulator (PTY jobs). The mailbox's schemas (TypeBox, which an installed copy's threads must never need)
 *    are never loaded by a thread at all: it imports only their types.
 *    Beside it, the loader the pool starts each compiled thread with, dist/actors/thread/cached-entry.cjs
 *    (actors/thread/cached-entry.ts), which compiles the bundle from the pool's shared V8 code cache.
 *
 * `needsBuild` says whether dist/ is older than the sources it is built from, for `npm start` and the benchmarks.
 */
import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** The folders whose code runs on worker threads or in the spawner. */
const SOURCE_FOLDERS = ["actors", "mailbox", "shared", "spawner"] as const;
/** Files besides the sources whose change changes the output. */
const BUILD_INPUTS = ["scripts/build.ts", "scripts/bundle-url.ts"];

const ENTRY = "actors/thread/actor-thread.ts";
/** What the pool loads on a compiled copy's threads: the bundle, compiled through V8's code cache. */
const CACHED_ENTRY = "actors/thread/cached-entry.ts";
const BUNDLED = [ENTRY, CACHED_ENTRY];
/** Written last: its time is when the last complete build ended. */
const BUNDLE = `dist/${ENTRY.replace(/\.ts$/, ".cjs")}`;
/** What `import.meta.url` becomes in the bundle: its own file's URL, which the bundle computes when it loads. */
const BUNDLE_URL = "scripts/bundle-url.ts";

/** Modules imported with `import()` for their heavy dependencies: kept out of the bundle, loaded from dist/ as compiled. */
const LOADED_ON_DEMAND = /\/terminal-text\.ts$/;

function sourceFiles(root: string): string[] {
  const filesOf = (folder: string) =>
    readdirSync(join(root, folder), { recursive: true, encoding: "utf8" }).map((file) => `${folder}/${file.split(sep).join("/")}`);
  return SOURCE_FOLDERS.filter((folder) => existsSync(join(root, folder)))
    .flatMap(filesOf)
    .filter((file) => file.endsWith(".ts"))
    .sort();
}

/** Whether dist/ at `root` is missing or older than any source or input of its build. */
export function needsBuild(root: string = ROOT): boolean {
  const bundle = join(root, BUNDLE);
  if (!existsSync(bundle)) return true;
  const built = statSync(bundle).mtimeMs;
  const inputs = [...sourceFiles(root), ...BUILD_INPUTS].map((file) => join(root, file));
  return inputs.some((file) => existsSync(file) && statSync(file).mtimeMs > built);
}

/** Pass 1: each file on its own. Every import stays an import; a relative one names the compiled file. */
const eachFileAlone: Plugin = {
  name: "each-file-alone",
  setup(context) {
    context.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === "entry-point") return undefined;
      return { path: args.path.startsWith(".") ? args.path.replace(/\.ts$/, ".js") : args.path, external: true };
    });
  },
};

/**
 * Pass 2: an on-demand module's import is written from the bundle's place, not the importer's: the importer's code
 * moves into the bundle, whose folder may differ (`actors/thread/` importing what `actors/output/` loads).
 */
const onDemandStaysSeparate: Plugin = {
  name: "on-demand-modules-stay-separate",
  setup(context) {
    context.onResolve({ filter: LOADED_ON_DEMAND }, (args) => {
      if (args.kind !== "dynamic-import") return undefined;
      const source = relative(ROOT, resolve(args.resolveDir, args.path));
      const compiled = join(ROOT, "dist", source.replace(/\.ts$/, ".js"));
      let path = relative(dirname(join(ROOT, BUNDLE)), compiled).split(sep).join("/");
      if (!path.startsWith(".")) path = `./${path}`;
      return { path, external: true };
    });
  },
};

/** comlink goes into the bundle (see above); every other package stays external. */
const bundleComlink: Plugin = {
  name: "bundle-comlink",
  setup(context) {
    context.onResolve({ filter: /^comlink$/ }, () => ({ path: createRequire(join(ROOT, ENTRY)).resolve("comlink") }));
  },
};

const COMMON = { absWorkingDir: ROOT, bundle: true, platform: "node", target: "node22", logLevel: "warning" } as const;

/**
 * Builds dist/. `clean` first removes it, so that nothing of a deleted source is left to be packed; `npm start` does
 * not, since another Pi of this checkout may be loading its threads from dist/ at that moment.
 */
export async function buildWorkers(options: { clean: boolean }): Promise<void> {
  if (options.clean) rmSync(join(ROOT, "dist"), { recursive: true, force: true });
  const eachFile = sourceFiles(ROOT).filter((file) => !BUNDLED.includes(file));
  await build({ ...COMMON, format: "esm", entryPoints: eachFile, outbase: ".", outdir: "dist", plugins: [eachFileAlone] });
  const bundleUrl = { inject: [BUNDLE_URL], define: { "import.meta.url": "bundleUrl" } };
  await build({ ...COMMON, ...bundleUrl, format: "cjs", entryPoints: [CACHED_ENTRY], outfile: `dist/${CACHED_ENTRY.replace(/\.ts$/, ".cjs")}` });
  await build({
    ...COMMON,
    format: "cjs",
    entryPoints: [ENTRY],
    outfile: BUNDLE,
    packages: "external",
    ...bundleUrl,
    // What only some jobs need is loaded with require() when first needed, not import(): code compiled by node:vm
    // (actors/thread/cached-entry.ts) has no module loader of its own to import with.
    supported: { "dynamic-import": false },
    plugins: [bundleComlink, onDemandStaysSeparate],
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildWorkers({ clean: true });
