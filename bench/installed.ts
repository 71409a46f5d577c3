/**
 * pi-jobs as a user installs it, for the benchmarks: the tarball `npm pack` makes (its `prepack` builds dist/),
 * installed by Pi's own `pi install npm:pi-jobs@file:<tarball>` into a scratch agent dir in the system temp dir
 * (tests/fixtures/packed-install.ts, which the install test runs real Pi on).
 *
 * A run packs and installs once. The process that made the install names it in the environment, so the child
 * processes a suite starts for its scenarios measure the same copy instead of packing their own; that process
 * removes it when the run ends.
 */
import { packAndInstall, removePackedInstall } from "../tests/fixtures/packed-install.ts";

/** The installed package's directory, for the child processes of a run. */
const PACKAGE_ENV = "PI_JOBS_BENCH_INSTALLED_PACKAGE";

/** Whether this process made the install (and so removes it). */
let made = false;

/** The installed package's directory: the run's install, packed and installed on the first call. */
export async function installedPackage(): Promise<string> {
  const given = process.env[PACKAGE_ENV];
  if (given !== undefined) return given;
  const { pkgDir } = await packAndInstall();
  made = true;
  // Children started from here on inherit it.
  process.env[PACKAGE_ENV] = pkgDir;
  return pkgDir;
}

/** Removes the install if this process made it; a child leaves the run's install to its parent. */
export async function removeInstalledPackage(): Promise<void> {
  if (!made) return;
  made = false;
  delete process.env[PACKAGE_ENV];
  await removePackedInstall();
}
