/**
 * Timings that one side of the mailbox sets and the other side's deadlines rest on. Plain values, defined once for
 * both threads, so that a change on one side cannot silently break the other's arithmetic.
 */

/**
 * How long an actor waits, once the group is gone, for its streams to close: until they carried nothing for
 * STREAM_CLOSE_WAIT_MS, at most STREAM_CLOSE_ROUNDS such periods; then it abandons them and reports.
 */
export const STREAM_CLOSE_WAIT_MS = 1000;
export const STREAM_CLOSE_ROUNDS = 3;

/** How often an actor bumps its heartbeat in the job's cell: the host's evidence that a slow actor still runs. */
export const HEARTBEAT_MS = 250;

/** The longest delay a Node timer takes as given (a longer one fires at once). */
export const MAX_TIMER_MS = 2_147_483_647;
