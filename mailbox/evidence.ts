/**
 * A job's evidence as it crosses in the exit message (mailbox/result.ts): the error-like lines of its whole run with
 * the lines that belong to each, kept by its actor (actors/output/evidence-log.ts), each line written `N: text` with
 * N its line in the log, groups of one shape in the fold format (shared/fold.ts). The host chooses how much of it a
 * report shows (host/evidence-text.ts).
 */
import { Type, type Static } from "typebox";

export const EvidenceBlock = Type.Object(
  {
    /** The log line of the block's first line. */
    line: Type.Integer({ minimum: 1 }),
    /** The error-like line that opened the block, as printed (without its line number): what a `next=` step names. */
    headline: Type.String(),
    lines: Type.Array(Type.String()),
  },
  { additionalProperties: false },
);
export type EvidenceBlock = Static<typeof EvidenceBlock>;

export const Evidence = Type.Object(
  {
    /** Error-like lines in the whole run, shown or not. */
    count: Type.Integer({ minimum: 0 }),
    /** In the order they were printed. When `omitted` is above zero, the last block is the run's last one. */
    blocks: Type.Array(EvidenceBlock),
    /** Blocks past the actor's bound, which lay before the last block. */
    omitted: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);
export type Evidence = Static<typeof Evidence>;

export const NO_EVIDENCE: Evidence = { count: 0, blocks: [], omitted: 0 };
