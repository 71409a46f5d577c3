/**
 * A copy of this checkout's working tree, its node_modules linked rather than copied: for what must build or write
 * into a checkout (`npm pack`, `npm start`'s build of dist/) without touching this one, and without a dist/ that a
 * previous build left here standing in for one that no longer produces a file.
 */
import { cpSync, symlinkSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { REPO_ROOT } from "./paths.ts";

/** Top-level entries of the checkout that are not sources. */
const NOT_COPIED = new Set(["node_modules", ".git", "dist"]);

/** Copies the working tree to `target` (made here) and returns it. */
export function copyCheckout(target: string): string {
  cpSync(REPO_ROOT, target, {
    recursive: true,
    filter: (path) => {
      const rel = relative(REPO_ROOT, path);
      return !NOT_COPIED.has(rel.split(sep)[0] ?? "") && !rel.endsWith(".tgz");
    },
  });
  symlinkSync(join(REPO_ROOT, "node_modules"), join(target, "node_modules"), "dir");
  return target;
}
