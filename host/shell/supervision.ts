/**
 * What a job's supervision looks like to the model: its state, why it stopped, its hard deadline, how long it has
 * been quiet, its log and whether its process group is known to be gone. Pure: derived from the job's state (its
 * phase, who asked for a stop, its terminal result) and a few observed numbers. A live job's words are its phases
 * (mailbox/lifecycle.ts); how a job ended is said in the shell-jobs spec's words (a deadline is `timed_out`, where the
 * runtime's cause is `timeout`). This file is where the shell tools' status words are defined.
 */
import type { ActorResult, LimitCause } from "../../mailbox/result.ts";
import { liveStatus } from "../../mailbox/lifecycle.ts";
import type { JobState, Phase, StopRequester } from "../runtime/api.ts";

export type StopReason =
  | "timed_out"
  | "stopped"
  | "session_shutdown"
  | "log_quota"
  | "log_failed"
  | "spawn_failed"
  | "actor_crashed"
  | "actor_unresponsive"
  | LimitCause;
/** The supervision's `cleanup`: nothing to stop, a stop under way, then whether the group was confirmed gone. */
export type Cleanup = "none" | "pending" | "confirmed" | "unconfirmed";
/**
 * The tools' `status`: whether the process exists yet (its phase), then how the job ended in the shell-jobs spec's
 * words (a stop request leaves it as it is).
 */
export type ProcessStatus = Extract<Phase, "starting" | "running"> | "exited" | "failed" | "timed_out" | "stopped";

export interface Supervision {
  /** Its phase while the job lives (`stopping` from a stop request on), then how it ended, a full log named apart. */
  state: ProcessStatus | Extract<Phase, "stopping"> | "log_quota" | "log_failed";
  stop_reason: StopReason | null;
  deadline_utc: string | null;
  quiet_ms: number | null;
  log_bytes: number;
  log_truncated: boolean;
  cleanup: Cleanup;
  /** Quiet past its stall_seconds while using under 1 % of a core. */
  stalled: boolean;
  /** Its last output is a prompt-shaped unterminated line, and nothing followed it for 2 s. */
  waiting_for_input: boolean;
  /** Its tree is over the watchdog's thresholds (README, "Resource limits and the watchdog"); it is not stopped for it. */
  runaway: boolean;
}

export interface Failure {
  reason: StopReason;
  message: string;
}

/** How a job ended, in the terms of the tool results. */
export interface Ending {
  status: Exclude<ProcessStatus, Phase>;
  state: Exclude<Supervision["state"], Phase>;
  stopReason: StopReason | null;
  failure: Failure | null;
}

export function describeEnding(result: ActorResult, stopBy: StopRequester | null, timeoutMs: number): Ending {
  switch (result.cause) {
    case "exit":
      return { status: "exited", state: "exited", stopReason: null, failure: null };
    case "timeout":
      return {
        status: "timed_out",
        state: "timed_out",
        stopReason: "timed_out",
        failure: { reason: "timed_out", message: `hard lifetime of ${formatSeconds(timeoutMs)} elapsed; the process group was stopped` },
      };
    case "stopped":
    case "contract": {
      const reason: StopReason = stopBy === "session_shutdown" ? "session_shutdown" : "stopped";
      return { status: "stopped", state: "stopped", stopReason: reason, failure: null };
    }
    case "log_quota":
      return failed("log_quota", `the log reached its quota (${result.message ?? "per-job or session budget"}); the job was stopped and the log is partial`, "log_quota");
    case "log_failed":
      return failed("log_failed", `the log could not be written (${result.log.error ?? result.message ?? "storage error"}); the job was stopped and the log is partial`, "log_failed");
    case "spawn_failed":
      return failed("spawn_failed", result.message ?? "the command could not be started");
    case "stalled":
    case "waiting_for_input":
      // Only monitors end this way; a shell job is flagged and woken about it instead, and keeps running.
      return failed("stopped", `the job was stopped: ${result.cause}`);
    case "memory_limit":
    case "cpu_limit":
    case "process_limit":
      return failed(result.cause, result.message ?? `the job passed its ${result.cause.replace("_", " ")}; its process group was stopped`);
    case "actor_crashed":
    case "actor_unresponsive":
      return failed(result.cause, result.message ?? "the job's supervisor thread failed; its process group was killed");
  }
}

/** A failed ending: the reason it stopped is the failure's reason. */
function failed(reason: StopReason, message: string, state: Ending["state"] = "failed"): Ending {
  return { status: "failed", state, stopReason: reason, failure: { reason, message } };
}

export function formatSeconds(ms: number): string {
  const s = ms / 1000;
  return Number.isInteger(s) ? `${s} s` : `${s.toFixed(3)} s`;
}

/** How the job ended, once it has; null while it runs. */
export function endingOf(job: JobState, timeoutMs: number): Ending | null {
  return job.phase === "ended" ? describeEnding(job.result, job.stopBy, timeoutMs) : null;
}

/**
 * The status the tools report: how the job ended, else whether its process exists yet. A job being stopped is still
 * `starting` or `running` here; its supervision says `stopping`.
 */
export function statusOf(job: JobState, timeoutMs: number): ProcessStatus {
  return job.phase === "ended" ? describeEnding(job.result, job.stopBy, timeoutMs).status : job.phase;
}

export interface SupervisionInput {
  job: JobState;
  /** The job's hard lifetime, which a timeout's wording names. */
  timeoutMs: number;
  deadlineEpochMs: number | null;
  /** Epoch ms of the last output (or of the start when there was none). */
  lastActivityEpochMs: number;
  nowEpochMs: number;
  logBytes: number;
  logTruncated: boolean;
  stalled?: boolean;
  waitingForInput?: boolean;
  runaway?: boolean;
}

export function deriveSupervision(input: SupervisionInput): Supervision {
  const { job } = input;
  const result = job.phase === "ended" ? job.result : null;
  const ending = endingOf(job, input.timeoutMs);
  const stopping = job.phase !== "ended" && job.stopBy !== null;
  const until = result === null ? input.nowEpochMs : result.endedAt;
  return {
    state: job.phase === "ended" ? describeEnding(job.result, job.stopBy, input.timeoutMs).state : liveStatus(job.phase, stopping),
    stop_reason: ending?.stopReason ?? null,
    deadline_utc: input.deadlineEpochMs === null ? null : new Date(input.deadlineEpochMs).toISOString(),
    quiet_ms: Math.max(0, Math.round(until - input.lastActivityEpochMs)),
    log_bytes: result?.log.bytes ?? input.logBytes,
    log_truncated: result?.log.truncated ?? input.logTruncated,
    cleanup: result !== null ? result.cleanup : stopping ? "pending" : "none",
    // A flag of a running job: an ended one is neither.
    stalled: result === null && (input.stalled ?? false),
    waiting_for_input: result === null && (input.waitingForInput ?? false),
    runaway: result === null && (input.runaway ?? false),
  };
}
