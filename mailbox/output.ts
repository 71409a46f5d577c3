/**
 * A job's output as a read returns it. The bytes stay in the actor; these bounded shapes are all that crosses, in a
 * read reply or the exit message (mailbox/messages.ts), and the host and the console use them as they are.
 */
import { Type, type Static } from "typebox";

export const RetainedLine = Type.Object(
  { source: Type.Union([Type.Literal("stdout"), Type.Literal("stderr"), Type.Literal("pty")]), text: Type.String() },
  { additionalProperties: false },
);
export type RetainedLine = Static<typeof RetainedLine>;

/** The retained window decoded into whole lines; what fell out of it is counted. */
export const RetainedWindow = Type.Object(
  {
    lines: Type.Array(RetainedLine),
    droppedLines: Type.Integer({ minimum: 0 }),
    droppedBytes: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);
export type RetainedWindow = Static<typeof RetainedWindow>;

/** A shell read: the bounded head and tail of what arrived since the previous read. */
export const TakenOutput = Type.Object(
  {
    /** Decoded text (raw: control characters are escaped later, where the text meets the model). */
    text: Type.String(),
    /** Bytes this read covered, including the omitted ones. */
    bytes: Type.Integer({ minimum: 0 }),
    /** Bytes dropped between head and tail. */
    omittedBytes: Type.Integer({ minimum: 0 }),
    /** Secrets the actor replaced in `text` (actors/redact/output.ts). */
    redactions: Type.Optional(Type.Integer({ minimum: 0 })),
    /** Lines of output inside folds in `text` (shared/fold.ts); absent for a raw read. */
    foldedLines: Type.Optional(Type.Integer({ minimum: 0 })),
    /**
     * The same read unfolded, when folding changed it: only a job's last read carries it, taken as the job ends,
     * before anyone could say which they want.
     */
    raw: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type TakenOutput = Static<typeof TakenOutput>;
