/**
 * Checks the `limits` of exec_command and monitor_start ({ memory_mb?, cpu_seconds?, processes? }) and turns them into
 * the limits the actor enforces over the job's tree (mailbox/spec.ts, ResourceLimits). Pure; every error names its
 * field. The process table measures the tree on every platform pi-jobs runs on (shared/process-table/).
 */
import { Type } from "typebox";
import type { ResourceLimits } from "../../mailbox/spec.ts";
import { fail, type Checked } from "./checked.ts";

/** Under this a memory limit could never be met: a shell and one small program already hold about as much. */
export const MIN_MEMORY_MB = 16;
/** The largest of each, so that every limit fits the spec's integers. */
const MAX_MEMORY_MB = 16 * 1024 * 1024;
const MAX_CPU_SECONDS = 30 * 86_400;
const MAX_PROCESSES = 1_000_000;

const FIELDS = ["memory_mb", "cpu_seconds", "processes"] as const;

/** exec_command's and monitor_start's resource limits over the job's whole process tree, as declared to the model. */
export const Limits = Type.Object(
  {
    memory_mb: Type.Optional(Type.Number()),
    cpu_seconds: Type.Optional(Type.Number()),
    processes: Type.Optional(Type.Integer()),
  },
  // Unknown fields are refused by name (limitsOf): the schema stays short, as every request pays it.
  { description: "Stop the job once its process tree passes any: resident MiB, CPU seconds, live processes" },
);

/** `limits` as given to the tool; null when absent or empty. */
export function limitsOf(tool: string, raw: unknown): Checked<ResourceLimits | null> {
  if (raw === undefined || raw === null) return { ok: true, value: null };
  if (typeof raw !== "object" || Array.isArray(raw)) return fail(`${tool}: limits must be an object with memory_mb, cpu_seconds and/or processes`);
  const a = raw as Record<string, unknown>;
  const unknown = Object.keys(a).filter((key) => !(FIELDS as readonly string[]).includes(key) && a[key] !== undefined);
  if (unknown.length > 0) return fail(`${tool}: unknown field limits.${unknown.join(", limits.")} (accepted: ${FIELDS.join(", ")})`);
  const given = (key: (typeof FIELDS)[number]) => a[key] !== undefined && a[key] !== null;
  if (!FIELDS.some(given)) return { ok: true, value: null };

  let memoryBytes: number | null = null;
  if (given("memory_mb")) {
    const m = a.memory_mb;
    if (typeof m !== "number" || !Number.isFinite(m) || m < MIN_MEMORY_MB || m > MAX_MEMORY_MB) {
      return fail(`${tool}: limits.memory_mb must be a number of MiB from ${MIN_MEMORY_MB} to ${MAX_MEMORY_MB} (got ${JSON.stringify(m)})`);
    }
    memoryBytes = Math.round(m * 1024 * 1024);
  }
  let cpuMs: number | null = null;
  if (given("cpu_seconds")) {
    const c = a.cpu_seconds;
    if (typeof c !== "number" || !Number.isFinite(c) || c <= 0 || c > MAX_CPU_SECONDS) {
      return fail(`${tool}: limits.cpu_seconds must be a positive number of CPU seconds, at most ${MAX_CPU_SECONDS} (got ${JSON.stringify(c)})`);
    }
    cpuMs = Math.max(1, Math.round(c * 1000));
  }
  let processes: number | null = null;
  if (given("processes")) {
    const p = a.processes;
    if (typeof p !== "number" || !Number.isInteger(p) || p < 1 || p > MAX_PROCESSES) {
      return fail(`${tool}: limits.processes must be a whole number of processes from 1 to ${MAX_PROCESSES} (got ${JSON.stringify(p)})`);
    }
    processes = p;
  }
  return { ok: true, value: { memoryBytes, cpuMs, processes } };
}
