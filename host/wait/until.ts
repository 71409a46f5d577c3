/**
 * When a wait_jobs call has what it waits for. Pure: the verdicts of its jobs in, why it may return (or null) out.
 */
import type { Verdict, WaitEndReason, WaitUntil } from "./result.ts";

export function conditionMet(until: WaitUntil, verdicts: readonly Verdict[]): WaitEndReason | null {
  if (verdicts.length === 0) return "nothing_to_wait_for";
  if (until === "first_failure" && verdicts.includes("failure")) return "failed";
  if (until === "any" && verdicts.some((v) => v !== "running")) return "one_ended";
  return verdicts.every((v) => v !== "running") ? "all_ended" : null;
}
