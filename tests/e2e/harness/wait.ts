/**
 * Waiting for conditions in end-to-end tests. These run on a noisy 2-core machine, so nothing here relies on
 * timing: a condition is polled until it holds or a generous deadline passes, and a timeout says what it waited
 * for and what it saw last.
 */
import { setTimeout as sleep } from "node:timers/promises";

export const DEFAULT_WAIT_MS = 20_000;
const POLL_MS = 25;

export class WaitTimeoutError extends Error {
  override name = "WaitTimeoutError";
}

/**
 * Polls `probe` until it returns something other than `undefined`/`false`, and returns that.
 * `describe` is called only on timeout, to put the last observed state into the error.
 */
export async function pollUntil<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: { timeoutMs?: number; what: string; describe?: () => string },
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? DEFAULT_WAIT_MS);
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() >= deadline) {
      const seen = options.describe?.();
      throw new WaitTimeoutError(
        `timed out after ${options.timeoutMs ?? DEFAULT_WAIT_MS} ms waiting for ${options.what}` +
          (seen === undefined ? "" : `\n--- last seen ---\n${seen}`),
      );
    }
    await sleep(POLL_MS);
  }
}
