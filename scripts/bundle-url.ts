/**
 * `import.meta.url` inside the actor thread's bundle, which is CommonJS (scripts/build.ts): the URL of the bundle's own
 * file, as `import.meta.url` is the URL of a module's own file. `__filename` is CommonJS's, which the bundle has.
 */
import { pathToFileURL } from "node:url";

export const bundleUrl = pathToFileURL(__filename).href;
