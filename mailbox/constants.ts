/**
 * The protocol's plain values. They live apart from the schemas so that worker code can use them without loading
 * TypeBox: an installed copy of pi-jobs runs its actors on plain Node, where Pi's own copy of TypeBox is not
 * reachable, and checks are off there anyway (docs/decisions/mailbox-checks.md).
 */

import type { MonitorOutcome } from "./monitor.ts";

/** Where output came from. */
export const SOURCE_ID = { stdout: 0, stderr: 1, pty: 2 } as const;
export type SourceName = keyof typeof SOURCE_ID;

/** How a shell job's output text was produced: by a terminal emulator (PTY) or as cleaned pipe text. */
export type OutputRendering = "terminal" | "text";

/** Bound on bytes written to a job's stdin but not yet taken by the process. */
export const MAX_WRITE_QUEUE_BYTES = 1024 * 1024;

/** The evidence fields of a monitor's outcome. */
export type HitFields = Pick<
  MonitorOutcome,
  | "matched"
  | "matchedTruncated"
  | "matchedSource"
  | "captures"
  | "capturesTruncated"
  | "hasResult"
  | "result"
  | "resultParseError"
  | "redactions"
  | "capturesRedacted"
>;

/** The evidence fields of an outcome that nothing matched (also the supervisor's, when a monitor's actor failed). */
export const NO_HIT: Readonly<HitFields> = Object.freeze({
  matched: null,
  matchedTruncated: false,
  matchedSource: null,
  captures: Object.freeze({}) as Record<string, string>,
  capturesTruncated: false,
  hasResult: false,
  resultParseError: null,
});
