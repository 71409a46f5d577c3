/**
 * The protocol's plain values. They live apart from the schemas so that worker code can use them without loading
 * TypeBox: an installed copy of pi-jobs runs its actors on plain Node, where Pi's own copy of TypeBox is not
 * reachable, and checks are off there anyway (docs/decisions.md).
 */

/** Where output came from. */
export const SOURCE_ID = { stdout: 0, stderr: 1, pty: 2 } as const;
export type SourceName = keyof typeof SOURCE_ID;

/** Bound on bytes written to a job's stdin but not yet taken by the process. */
export const MAX_WRITE_QUEUE_BYTES = 1024 * 1024;
