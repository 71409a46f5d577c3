/**
 * The job an exec_command starts: its validated request as the runtime's start request. Pure.
 */
import type { WatchdogSpec, WatchedTree } from "../../mailbox/spec.ts";
import type { StartRequest } from "../runtime/api.ts";
import { DEFAULT_PTY_SIZE, OUTPUT_HEAD_BYTES, OUTPUT_TAIL_BYTES } from "./limits.ts";
import type { ExecRequest } from "./validate.ts";

/** Characters of the command in the job's label, which the console and /jobs show on one line. */
const LABEL_COMMAND_CHARS = 80;

/**
 * `follower`: for a persisted job, what the actor runs in place of the request's command (host/persist/keeper.ts), and
 * the job's tree its watches look at instead of the follower's (null: an entry whose job carries no tag of its own);
 * the job's label still shows the request's command, marked persisted for the console and /jobs.
 */
export function startRequestOf(
  request: ExecRequest,
  cwd: string,
  limits: { killGraceMs: number; logMaxBytes: number },
  watchdog: WatchdogSpec | null = null,
  follower: { command: string; shell: string; tree: WatchedTree | null } | null = null,
): StartRequest {
  const shell = follower?.shell ?? request.shell;
  const tree = follower?.tree ?? null;
  return {
    kind: "shell",
    command: follower?.command ?? request.cmd,
    ...(shell !== null ? { shell } : {}),
    cwd,
    io: request.tty ? { kind: "pty", cols: DEFAULT_PTY_SIZE.cols, rows: DEFAULT_PTY_SIZE.rows } : { kind: "pipes", stdin: true },
    timeoutMs: request.timeoutMs,
    killGraceMs: limits.killGraceMs,
    log: { maxBytes: limits.logMaxBytes, onQuota: "stop" },
    unread: { headBytes: OUTPUT_HEAD_BYTES, tailBytes: OUTPUT_TAIL_BYTES },
    label: `${follower === null ? "shell" : "shell (persisted)"}: ${request.cmd.slice(0, LABEL_COMMAND_CHARS)}`,
    ...(request.ready !== null || request.stallMs !== null || request.limits !== null || watchdog !== null || tree !== null
      ? {
          watch: {
            ready: request.ready,
            stallMs: request.stallMs,
            ...(request.limits !== null ? { limits: request.limits } : {}),
            ...(watchdog !== null ? { watchdog } : {}),
            ...(tree !== null ? { tree } : {}),
          },
        }
      : {}),
  };
}
