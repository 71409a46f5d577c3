/**
 * The wait of an exec_command with `ready`: it returns as soon as the actor reports the job ready (or its ready
 * deadline passed), the job exits, or the call is cancelled or steered, whichever comes first.
 */
import type { ReadyReport } from "../../mailbox/protocol.ts";
import type { ReadyResult } from "./result.ts";
import type { ShellSession } from "./session.ts";

export type ReadyOutcome = { kind: "ready" | "timeout"; report: ReadyReport } | { kind: "exit" | "cancelled" | "steered" };

export function waitReady(
  session: ShellSession,
  signal: AbortSignal | undefined,
  steer: { add(listener: () => void): void; delete(listener: () => void): void } | null,
): Promise<ReadyOutcome> {
  if (session.result !== null) return Promise.resolve({ kind: "exit" });
  if (signal?.aborted) return Promise.resolve({ kind: "cancelled" });
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: ReadyOutcome): void => {
      if (settled) return;
      settled = true;
      session.exitWaiters.delete(onExit);
      signal?.removeEventListener("abort", onAbort);
      steer?.delete(onSteer);
      resolve(outcome);
    };
    const onExit = (): void => finish({ kind: "exit" });
    const onAbort = (): void => finish({ kind: "cancelled" });
    const onSteer = (): void => finish({ kind: "steered" });
    session.exitWaiters.add(onExit);
    signal?.addEventListener("abort", onAbort, { once: true });
    steer?.add(onSteer);
    void session.handle.readiness().then((report) => {
      // null: the job ended before a report; its exit waiter answers.
      if (report !== null) finish({ kind: report.status, report });
    });
  });
}

/** The `ready` field of the result. */
export function readyResult(outcome: ReadyOutcome, session: ShellSession, nowEpochMs: number): ReadyResult {
  if (outcome.kind === "ready" || outcome.kind === "timeout") {
    const { report } = outcome;
    return {
      status: outcome.kind,
      elapsed_ms: report.elapsedMs,
      ...(report.matched !== null ? { matched: report.matched } : {}),
      ...(report.captures !== null && Object.keys(report.captures).length > 0 ? { captures: report.captures } : {}),
      ...(report.port !== null ? { port: report.port } : {}),
    };
  }
  const started = session.result?.startedAt ?? session.startedEpochMs;
  const until = session.result?.endedAt ?? nowEpochMs;
  return { status: outcome.kind === "exit" ? "exited" : "not_ready", elapsed_ms: Math.max(0, until - started) };
}
