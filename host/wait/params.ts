/**
 * What the model sees of wait_jobs: its description, guideline, parameter schema and output schema. Every word of
 * the declaration is sent with every request (docs/tokens.md counts it), so it says what each field is for and no
 * more; the validator (host/wait/validate.ts) enforces the rest with errors that name the field.
 */
import { Type } from "typebox";
import { DEFAULT_WAIT_MS, WAIT_JOBS } from "./validate.ts";
import { UsageFieldsSchema } from "../runtime/usage-line.ts";

export const WAIT_JOBS_DESCRIPTION =
  "Collect background jobs (monitor ids, shell session_ids), each result once, a line per job. Jobs keep running " +
  "past timeout_ms.";

export const WAIT_JOBS_GUIDELINE =
  "Start independent jobs first, then collect them with one wait_jobs call instead of sleeping or polling.";

export const WaitJobsParams = Type.Object(
  {
    ids: Type.Optional(Type.Array(Type.String(), { description: "Omit for every job not yet collected" })),
    // A plain string enum rather than a union of literals: some providers reject anyOf/const in parameters.
    until: Type.Optional(Type.Unsafe<string>({ type: "string", enum: ["all", "any", "first_failure"], default: "all" })),
    timeout_ms: Type.Optional(Type.Integer({ default: DEFAULT_WAIT_MS })),
  },
  { additionalProperties: false },
);

const Verdict = Type.Union(["success", "failure", "stopped", "running", "unknown"].map((v) => Type.Literal(v)));
const Collected = Type.Union(["now", "earlier", "wake", "own_call", "none", "not_yet"].map((v) => Type.Literal(v)));
const NullableInt = Type.Union([Type.Integer(), Type.Null()]);

export const WaitJobLineSchema = Type.Object(
  {
    id: Type.String(),
    kind: Type.Union([Type.Literal("shell"), Type.Literal("monitor")]),
    session_id: Type.Optional(Type.Integer()),
    label: Type.String(),
    verdict: Verdict,
    status: Type.String(),
    exit_code: NullableInt,
    duration_ms: Type.Number({ minimum: 0 }),
    collected: Collected,
    evidence: Type.Optional(Type.String()),
    output: Type.Optional(Type.String()),
    output_lines_omitted: Type.Optional(Type.Integer({ minimum: 0 })),
    captures: Type.Optional(Type.Record(Type.String(), Type.String())),
    result: Type.Optional(Type.Unknown()),
    reason: Type.Optional(Type.String()),
    redactions: Type.Optional(Type.Integer({ minimum: 0 })),
    usage: Type.Optional(UsageFieldsSchema),
    log_path: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);

export const WaitJobsResultSchema = Type.Object(
  {
    operation: Type.Literal("wait_jobs"),
    until: Type.Union([Type.Literal("all"), Type.Literal("any"), Type.Literal("first_failure")]),
    wait_status: Type.Union(
      ["all_ended", "one_ended", "failed", "nothing_to_wait_for", "timeout", "steered", "cancelled"].map((v) => Type.Literal(v)),
    ),
    waited_ms: Type.Number({ minimum: 0 }),
    jobs: Type.Array(WaitJobLineSchema),
    running: Type.Array(Type.String()),
    summary: Type.String(),
  },
  { additionalProperties: false },
);

/** The declaration as install.ts registers it and bench/tokens.ts measures it. */
export const WAIT_JOBS_TOOL = {
  name: WAIT_JOBS,
  label: "Wait for jobs",
  description: WAIT_JOBS_DESCRIPTION,
  parameters: WaitJobsParams,
  outputSchema: WaitJobsResultSchema,
  promptGuidelines: [WAIT_JOBS_GUIDELINE],
};
