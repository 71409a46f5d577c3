/**
 * The numbers shell jobs promise: defaults, clamps and bounds. One place, so the tools, the guidance text and the
 * tests agree on them.
 */

/** Registered shell sessions (running plus retained completed ones); a running job is never evicted to make room. */
export const MAX_SESSIONS = 64;
/** Per-job log quota; reaching it stops the job and leaves a partial log. */
export const LOG_MAX_BYTES = 16 * 1024 * 1024;
/** Bytes written to a job but not yet taken by the process. */
export const MAX_WRITE_QUEUE_BYTES = 1024 * 1024;
/** Grace between the requested signal and SIGKILL when a job is stopped. */
export const KILL_GRACE_MS = 2_000;

export const DEFAULT_TIMEOUT_SECONDS = 1_800;
export const MAX_TIMEOUT_SECONDS = 86_400;
/** A persisted job (persist: true) outlives Pi: its keeper ends it after this long unless timeout_seconds says less. */
export const PERSIST_DEFAULT_TIMEOUT_SECONDS = 28_800;

/** Initial exec waits and input-bearing waits are clamped into this range. */
export const MIN_ACTIVE_WAIT_MS = 250;
export const MAX_ACTIVE_WAIT_MS = 30_000;
export const DEFAULT_EXEC_WAIT_MS = 10_000;
export const DEFAULT_INPUT_WAIT_MS = 250;

/** PTY geometry accepted by a resize, and the size a new PTY starts with. */
export const PTY_COLS = { min: 20, max: 500 } as const;
export const PTY_ROWS = { min: 5, max: 300 } as const;
export const DEFAULT_PTY_SIZE = { cols: 120, rows: 30 } as const;

/** Model-facing output keeps this many bytes from the start and from the end of one read. */
export const OUTPUT_HEAD_BYTES = 8 * 1024;
export const OUTPUT_TAIL_BYTES = 8 * 1024;

/** Completions that finish close together become one wake: flush this long after the latest one… */
export const WAKE_QUIET_MS = 1_000;
/** …but never later than this after the first one. */
export const WAKE_MAX_DELAY_MS = 3_000;
/** Sessions described in one wake or one receipt; the rest are counted. */
export const NOTICE_MAX_SESSIONS = 16;
/** Characters of a command shown in metadata (wakes, receipts, lists). */
export const COMMAND_PREVIEW_CHARS = 120;
