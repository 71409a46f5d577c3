/**
 * Vitest global setup: the whole run gets a temporary directory of its own (TMPDIR, inherited by the test workers and
 * by every Pi, shell and job they start), removed when the run ends. Each runtime keeps its jobs' logs after shutdown,
 * as a user's session does, so without this every run would leave hundreds of log directories in the system's tmp.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export default function setup(): () => void {
  // Not named `pi-jobs-*`: a real session's crash cleanup looks for its peers' directories under that name.
  const dir = mkdtempSync(join(tmpdir(), "vitest-pi-jobs-"));
  process.env.TMPDIR = dir;
  return () => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
}
