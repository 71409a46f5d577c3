/**
 * The one wait of a wait_jobs call: until its condition holds (checked as each job ends, synchronously with the end,
 * so the answer follows the last exit at once), its time is up, the call is aborted or a human steers. Like the shell
 * tools' wait (host/shell/job-wait.ts) it is attachment, not lifetime: it never stops a job.
 */
import { MAX_TIMER_MS } from "../../mailbox/timings.ts";
import type { JobHandle } from "../runtime/api.ts";
import type { Steering } from "../shell/job-wait.ts";
import type { WaitEndReason } from "./result.ts";

export interface WaitOn {
  jobs: readonly JobHandle[];
  /** The condition: checked now and after every end; non-null ends the wait with that reason. */
  check: () => WaitEndReason | null;
  waitMs: number;
  signal?: AbortSignal | undefined;
  /** null: steering does not end the wait. */
  steering: Steering | null;
}

export function waitUntil(on: WaitOn): Promise<WaitEndReason> {
  const now = on.check();
  if (now !== null) return Promise.resolve(now);
  if (on.signal?.aborted) return Promise.resolve("cancelled");
  if (on.waitMs <= 0) return Promise.resolve("timeout");
  return new Promise((resolve) => {
    let settled = false;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const forget: (() => void)[] = [];
    const finish = (reason: WaitEndReason): void => {
      if (settled) return;
      settled = true;
      if (timer !== null) clearTimeout(timer);
      for (const unsubscribe of forget) unsubscribe();
      on.signal?.removeEventListener("abort", onAbort);
      on.steering?.delete(onSteer);
      resolve(reason);
    };
    const onAbort = (): void => finish("cancelled");
    const onSteer = (): void => finish("steered");
    on.signal?.addEventListener("abort", onAbort, { once: true });
    on.steering?.add(onSteer);
    const deadline = performance.now() + on.waitMs;
    const arm = (): void => {
      const left = deadline - performance.now();
      if (left <= 0) return finish("timeout");
      timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
    };
    arm();
    // Subscribed last: a job that has already ended calls back at once, and everything above must exist by then.
    for (const job of on.jobs) {
      if (settled) break;
      const unsubscribe = job.onEnd(() => {
        const reason = on.check();
        if (reason !== null) finish(reason);
      });
      if (settled) unsubscribe();
      else forget.push(unsubscribe);
    }
  });
}
