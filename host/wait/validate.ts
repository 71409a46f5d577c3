/**
 * wait_jobs' arguments checked and normalised, with errors that name the field. Pure: whether an id belongs to this
 * session is the service's question (host/wait/targets.ts); here only its shape is.
 */
import type { WaitUntil } from "./result.ts";
import type { Checked } from "../tools/checked.ts";

/** A job as the model names it: a shell session (`3`, `"3"`, `"job_3"`) or a monitor (`"monitor_2"`). */
export type JobRef = { kind: "shell"; sessionId: number } | { kind: "monitor"; monitorId: string };

export interface WaitRequest {
  /** null: every job of the session that has not been collected yet. */
  ids: JobRef[] | null;
  until: WaitUntil;
  timeoutMs: number;
}

export const WAIT_JOBS = "wait_jobs";
export const DEFAULT_WAIT_MS = 600_000;
/** A timer takes at most 2^31-1 ms; longer timeouts are cut to the jobs' lifetimes anyway. */
export const MAX_WAIT_MS = 2_147_483_647;
const UNTIL: readonly WaitUntil[] = ["all", "any", "first_failure"];
const FIELDS = ["ids", "until", "timeout_ms"];

export function refName(ref: JobRef): string {
  return ref.kind === "shell" ? `job_${ref.sessionId}` : ref.monitorId;
}

/** One id, or null when it names no job shape at all. */
export function parseRef(raw: unknown): JobRef | null {
  if (typeof raw === "number") return Number.isSafeInteger(raw) && raw > 0 ? { kind: "shell", sessionId: raw } : null;
  if (typeof raw !== "string") return null;
  const text = raw.trim();
  const shell = /^(?:job_)?([1-9][0-9]{0,8})$/.exec(text);
  if (shell) return { kind: "shell", sessionId: Number(shell[1]) };
  return /^monitor_[1-9][0-9]{0,8}$/.test(text) ? { kind: "monitor", monitorId: text } : null;
}

const fail = (error: string): Checked<never> => ({ ok: false, error: `${WAIT_JOBS}: ${error}` });

export function validateWaitJobs(raw: unknown): Checked<WaitRequest> {
  const args = raw === undefined || raw === null ? {} : raw;
  if (typeof args !== "object" || Array.isArray(args)) return fail("arguments must be an object");
  const record = args as Record<string, unknown>;
  const unknown = Object.keys(record).filter((key) => !FIELDS.includes(key));
  if (unknown.length > 0) return fail(`unknown field ${unknown.join(", ")}; the fields are ${FIELDS.join(", ")}`);

  let ids: JobRef[] | null = null;
  if (record.ids !== undefined && record.ids !== null) {
    if (!Array.isArray(record.ids)) return fail("ids must be a list of monitor ids and/or shell session_ids");
    if (record.ids.length === 0) return fail("ids is an empty list; omit ids to wait for every job not yet collected");
    const bad = record.ids.filter((id) => parseRef(id) === null);
    if (bad.length > 0) {
      return fail(`ids: ${bad.map((id) => JSON.stringify(id)).join(", ")} ${bad.length === 1 ? "is not a job id" : "are not job ids"} (a session_id such as 3, or monitor_N)`);
    }
    // The same job named twice is waited for once.
    const seen = new Map<string, JobRef>();
    for (const id of record.ids) {
      const ref = parseRef(id) as JobRef;
      seen.set(refName(ref), ref);
    }
    ids = [...seen.values()];
  }

  const until = record.until ?? "all";
  if (typeof until !== "string" || !UNTIL.includes(until as WaitUntil)) {
    return fail(`until: ${JSON.stringify(until)} is not one of ${UNTIL.join(", ")}`);
  }

  const timeout = record.timeout_ms ?? DEFAULT_WAIT_MS;
  if (typeof timeout !== "number" || !Number.isFinite(timeout)) return fail(`timeout_ms: ${JSON.stringify(timeout)} is not a number of milliseconds`);
  if (timeout < 0) return fail(`timeout_ms: ${timeout} is negative; use 0 for an immediate look, or omit it (10 minutes)`);

  return { ok: true, value: { ids, until: until as WaitUntil, timeoutMs: Math.min(Math.floor(timeout), MAX_WAIT_MS) } };
}
