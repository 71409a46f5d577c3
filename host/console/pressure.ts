/**
 * Whether the console warns about a job's resource use: its tree is a runaway by the watchdog's thresholds, or one of
 * its figures has reached NEAR_LIMIT of the job's limit for it. Pure; the console colours such a job with the theme's
 * warning role (ui/console-view.ts).
 */
import type { ResourceLimits } from "../../mailbox/spec.ts";
import type { TreeUsage } from "../runtime/api.ts";
import type { Pressure } from "../../ui/views.ts";

/** The share of a limit from which a job is shown as near it. */
export const NEAR_LIMIT = 0.8;

export function pressureOf(usage: TreeUsage | null, limits: ResourceLimits | null, runaway: boolean): Pressure {
  if (runaway) return "runaway";
  if (usage === null || limits === null) return "none";
  const near = (value: number, limit: number | null) => limit !== null && value >= limit * NEAR_LIMIT;
  return near(usage.rssBytes, limits.memoryBytes) || near(usage.cpuMs, limits.cpuMs) || near(usage.processes, limits.processes) ? "near_limit" : "none";
}
