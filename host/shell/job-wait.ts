/**
 * The one wait of the shell tools: until something the call waits for (its wait's duration, or the job's readiness),
 * the job's end, the call's abort or a human's steering, whichever comes first. A wait is attachment, not lifetime:
 * it never stops the job.
 */
import { MAX_TIMER_MS } from "../../mailbox/timings.ts";
import type { ReadyReport } from "../../mailbox/messages.ts";
import type { JobHandle } from "../runtime/api.ts";

/** How a wait ended: `reached` carries what `until` resolved with (a wait without `until` never ends so). */
export type WaitEnd<T = never> = { kind: "exit" | "deadline" | "cancelled" | "steered" } | ([T] extends [never] ? never : { kind: "reached"; value: T });

/** Where a human's steering is announced: each wait in progress listens while it lasts. */
export interface Steering {
  add(listener: () => void): void;
  delete(listener: () => void): void;
}

export interface WaitFor<T> {
  /** Ends the wait with its value; never rejects (one that never settles leaves the wait to the other ends). */
  until?: Promise<T>;
  /** Ends the wait after this long; without it only the other ends do. */
  durationMs?: number;
  signal?: AbortSignal | undefined;
  /** null: steering does not end the wait. */
  steering: Steering | null;
}

export function waitFor<T = never>(job: JobHandle, options: WaitFor<T>): Promise<WaitEnd<T>> {
  const { until, durationMs, signal, steering } = options;
  if (job.phase() === "ended") return Promise.resolve({ kind: "exit" });
  if (durationMs !== undefined && durationMs <= 0) return Promise.resolve({ kind: "deadline" });
  if (signal?.aborted) return Promise.resolve({ kind: "cancelled" });
  return new Promise((resolve) => {
    let settled = false;
    let timer: ReturnType<typeof setTimeout> | null = null;
    let forgetEnd = (): void => {};
    const finish = (end: WaitEnd<T>): void => {
      if (settled) return;
      settled = true;
      if (timer !== null) clearTimeout(timer);
      forgetEnd();
      signal?.removeEventListener("abort", onAbort);
      steering?.delete(onSteer);
      resolve(end);
    };
    const onAbort = (): void => finish({ kind: "cancelled" });
    const onSteer = (): void => finish({ kind: "steered" });
    signal?.addEventListener("abort", onAbort, { once: true });
    steering?.add(onSteer);
    // The job's end is heard as it happens (JobHandle.onEnd), so the answer that follows reads the job ended.
    forgetEnd = job.onEnd(() => finish({ kind: "exit" }));
    void until?.then((value) => finish({ kind: "reached", value } as WaitEnd<T>));
    if (durationMs !== undefined) {
      const deadline = performance.now() + durationMs;
      const arm = (): void => {
        const left = deadline - performance.now();
        if (left <= 0) return finish({ kind: "deadline" });
        // Longer waits re-arm: a timer takes at most MAX_TIMER_MS as given.
        timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
      };
      arm();
    }
  });
}

/** The actor's readiness report, as a wait's `until`; a job that ended first never resolves it (its end answers). */
export function readinessOf(handle: JobHandle): Promise<ReadyReport> {
  return new Promise((resolveReport) => {
    void handle.readiness().then((report) => {
      if (report !== null) resolveReport(report);
    });
  });
}
