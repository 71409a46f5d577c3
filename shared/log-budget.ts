/**
 * What the host sets up once per session for every job's log (actors/output/log-writer.ts writes them): the private log
 * directory, and the byte budget all jobs of the session share — one BigInt64 in a SharedArrayBuffer, which each
 * actor spends from with compare-and-swap. Used on Pi's thread (the runtime makes both) and in the actors.
 */
import { chmodSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Creates the session's private log directory under the system temp directory. */
export function createSessionLogDir(prefix = "pi-jobs-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  // mkdtemp asks for 0700, but a umask is applied to it; set the mode explicitly.
  chmodSync(dir, 0o700);
  return dir;
}

/** A session-wide budget of `bytes` log bytes, to share with every actor. */
export function createLogBudget(bytes: number): SharedArrayBuffer {
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`log budget must be a byte count, got ${bytes}`);
  const budget = new SharedArrayBuffer(BigInt64Array.BYTES_PER_ELEMENT);
  new BigInt64Array(budget)[0] = BigInt(bytes);
  return budget;
}
