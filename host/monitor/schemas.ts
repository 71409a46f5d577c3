/**
 * What the model sees of the monitor tools: their descriptions, parameter schemas and output schemas, and the
 * validation that turns raw tool arguments into a normalised start request.
 *
 * Every word here is sent with every request, so descriptions are short and say what a field is for, not how the
 * monitor works; the prompt guidance carries the usage rules.
 */
import { Evidence } from "../../mailbox/evidence.ts";
import { Type, type Static } from "typebox";
import { Completion, MonitorOutcome, MonitorStatus } from "../../mailbox/monitor.ts";
import { validatePattern } from "../../shared/linear-regex.ts";
import { deriveDescription } from "./describe.ts";
import { ToolError, type Checked } from "../tools/checked.ts";
import { stallOf } from "../tools/ready.ts";
import { Limits, limitsOf } from "../tools/limits.ts";
import { LimitTrip } from "../../mailbox/result.ts";
import type { ResourceLimits } from "../../mailbox/spec.ts";

export const MONITOR_START = "monitor_start";
export const MONITOR_STOP = "monitor_stop";

export const DEFAULT_TIMEOUT_MS = 600_000;
export const MAX_TIMEOUT_MS = 2_147_483_647;

export const MONITOR_START_DESCRIPTION =
  "Run a command with its output kept out of context. Returns one result: success " +
  "(result_pattern), failure (failure_pattern or nonzero exit), result_missing (exit 0, no match) or timeout.";

export const MONITOR_STOP_DESCRIPTION = "Stop one monitor (monitor_id) or all; a stopped monitor delivers no result.";

// Declarations are sent with every request, so the schemas state only what the model must know to call well; the
// validator below enforces the rest (non-empty strings, the timeout range) with errors that name the field.
export const MonitorStartParams = Type.Object(
  {
    command: Type.String(),
    description: Type.Optional(Type.String({ description: "Short label" })),
    result_pattern: Type.String({
      description: "JS regex of the success line; named groups are captured, (?<json>…) parsed into result",
    }),
    failure_pattern: Type.Optional(Type.String({ description: "JS regex of a failure line" })),
    // A plain string enum rather than a union of literals: some providers reject anyOf/const in parameters.
    completion: Type.Optional(
      Type.Unsafe<Completion>({
        type: "string",
        enum: ["match", "exit"],
        default: "match",
        description: "match: first match wins and stops the process; exit: also needs exit 0",
      }),
    ),
    timeout_ms: Type.Optional(Type.Integer({ default: DEFAULT_TIMEOUT_MS })),
    compact: Type.Optional(Type.Boolean({ description: "Shorter lossless report" })),
    stall_seconds: Type.Optional(Type.Number()),
    limits: Type.Optional(Limits),
  },
  { additionalProperties: false },
);
export type MonitorStartParams = Static<typeof MonitorStartParams>;

export const MonitorStopParams = Type.Object(
  { monitor_id: Type.Optional(Type.String()) },
  { additionalProperties: false },
);
export type MonitorStopParams = Static<typeof MonitorStopParams>;

// ── Output schemas (structuredContent; what codemode scripts receive) ───────────────────────────────────────────

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

// The outcome's own fields, after the host's identity and timing; what each means is said in mailbox/monitor.ts.
const { status, completion, stoppedBy, ...found } = MonitorOutcome.properties;

/** The complete terminal result: the actor's outcome plus the host's identity and timing. Values are bounded, never previewed. */
export const MonitorTerminalResult = Type.Object(
  {
    monitorId: Type.String(),
    description: Type.String(),
    status,
    completion,
    stoppedBy,
    elapsedMs: Type.Number({ minimum: 0 }),
    /** Epoch milliseconds; null when nothing was spawned. */
    startedAt: Nullable(Type.Number()),
    completedAt: Type.Number(),
    timeoutMs: Type.Integer({ minimum: 1, maximum: MAX_TIMEOUT_MS }),
    ...found,
    /** The error-like lines of the whole run that its tail does not show (all of them for a success). */
    evidence: Evidence,
    /** The limit that stopped the run (reason memory_limit, cpu_limit or process_limit) and the peak that passed it. */
    limit: Type.Optional(LimitTrip),
  },
  { additionalProperties: false },
);
export type MonitorTerminalResult = Static<typeof MonitorTerminalResult>;

export const MonitorStartRunning = Type.Object(
  { monitorId: Type.String(), description: Type.String(), status: Type.Literal("running") },
  { additionalProperties: false },
);
export const MonitorStartTerminal = Type.Object(
  { monitorId: Type.String(), description: Type.String(), status: MonitorStatus, result: MonitorTerminalResult },
  { additionalProperties: false },
);
export const MonitorStartOutput = Type.Union([MonitorStartRunning, MonitorStartTerminal]);
export type MonitorStartOutput = Static<typeof MonitorStartOutput>;

export const MonitorStopOutput = Type.Object(
  { stopped: Type.Integer({ minimum: 0 }) },
  { additionalProperties: false },
);
export type MonitorStopOutput = Static<typeof MonitorStopOutput>;

// ── Declarations: what install.ts registers and bench/tokens.ts measures ────────────────────────────────────────

export const MONITOR_START_TOOL = {
  name: MONITOR_START,
  label: "Monitor",
  description: MONITOR_START_DESCRIPTION,
  parameters: MonitorStartParams,
  outputSchema: MonitorStartOutput,
};

export const MONITOR_STOP_TOOL = {
  name: MONITOR_STOP,
  label: "Stop monitor",
  description: MONITOR_STOP_DESCRIPTION,
  parameters: MonitorStopParams,
  outputSchema: MonitorStopOutput,
};

// ── Validation ──────────────────────────────────────────────────────────────────────────────────────────────────

/** A start request after validation: defaults applied, description resolved. */
export interface NormalizedStart {
  command: string;
  description: string;
  /** Whether the label was given by the model or derived from the command. */
  descriptionSource: "explicit" | "derived";
  resultPattern: string;
  failurePattern: string | null;
  completion: Completion;
  timeoutMs: number;
  compact: boolean;
  /** Quiet and idle this long (or at a prompt) ends the run as a failure; null: not judged. */
  stallMs: number | null;
  /** Past any of these the run ends as a failure with the limit's reason; null: no limit. */
  limits: ResourceLimits | null;
}

export interface NormalizedStop {
  /** null stops every active monitor. */
  monitorId: string | null;
}

/** Checks that a pattern compiles; the matcher's own check by default, so the tool rejects exactly what it cannot run. */
export type PatternCheck = (source: string) => { ok: true } | { ok: false; error: string };

const START_FIELDS = new Set(Object.keys(MonitorStartParams.properties));
const STOP_FIELDS = new Set(Object.keys(MonitorStopParams.properties));

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function unknownField(raw: Record<string, unknown>, known: ReadonlySet<string>): string | null {
  const extra = Object.keys(raw).find((key) => !known.has(key));
  return extra === undefined ? null : `unknown field ${JSON.stringify(extra)}`;
}

function requiredString(raw: Record<string, unknown>, field: string): string {
  const value = raw[field];
  if (value === undefined || value === null) throw new ToolError(`${field}: required`);
  if (typeof value !== "string") throw new ToolError(`${field}: expected a string`);
  if (value.trim() === "") throw new ToolError(`${field}: must not be empty`);
  return value;
}

// Models often send null for an omitted optional field; treating it as omitted costs nothing and saves a retry.
function optional<T>(raw: Record<string, unknown>, field: string, read: (value: unknown) => T): T | undefined {
  const value = raw[field];
  return value === undefined || value === null ? undefined : read(value);
}

function pattern(field: string, source: string, check: PatternCheck): string {
  const verdict = check(source);
  if (!verdict.ok) throw new ToolError(`${field}: ${verdict.error}`);
  return source;
}

/**
 * Validates raw `monitor_start` arguments. Every error names the field it is about, so the model can fix its call.
 * `checkPattern` is the matcher's compile check unless a test passes another.
 */
export function validateMonitorStart(raw: unknown, checkPattern: PatternCheck = validatePattern): Checked<NormalizedStart> {
  if (!isRecord(raw)) return { ok: false, error: "arguments: expected an object" };
  const extra = unknownField(raw, START_FIELDS);
  if (extra) return { ok: false, error: extra };
  try {
    const command = requiredString(raw, "command");
    const resultPattern = pattern("result_pattern", requiredString(raw, "result_pattern"), checkPattern);
    const failurePattern =
      optional(raw, "failure_pattern", (value) => {
        if (typeof value !== "string") throw new ToolError("failure_pattern: expected a string");
        if (value === "") throw new ToolError("failure_pattern: must not be empty (omit it instead)");
        return pattern("failure_pattern", value, checkPattern);
      }) ?? null;
    const explicit = optional(raw, "description", (value) => {
      if (typeof value !== "string") throw new ToolError("description: expected a string");
      return value.trim();
    });
    const completion =
      optional(raw, "completion", (value): Completion => {
        if (value !== "match" && value !== "exit") throw new ToolError('completion: expected "match" or "exit"');
        return value;
      }) ?? "match";
    const timeoutMs =
      optional(raw, "timeout_ms", (value) => {
        if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_TIMEOUT_MS) {
          throw new ToolError(`timeout_ms: expected an integer from 1 to ${MAX_TIMEOUT_MS}`);
        }
        return value;
      }) ?? DEFAULT_TIMEOUT_MS;
    const compact =
      optional(raw, "compact", (value) => {
        if (typeof value !== "boolean") throw new ToolError("compact: expected true or false");
        return value;
      }) ?? false;
    const stallMs =
      optional(raw, "stall_seconds", (value) => {
        const checked = stallOf("monitor_start", value);
        if (!checked.ok) throw new ToolError(checked.error.replace("monitor_start: ", ""));
        return checked.value;
      }) ?? null;
    const checkedLimits = limitsOf("monitor_start", raw.limits);
    if (!checkedLimits.ok) throw new ToolError(checkedLimits.error.replace("monitor_start: ", ""));
    const derived = explicit === undefined || explicit === "";
    return {
      ok: true,
      value: {
        command,
        description: derived ? deriveDescription(command) : explicit,
        descriptionSource: derived ? "derived" : "explicit",
        resultPattern,
        failurePattern,
        completion,
        timeoutMs,
        compact,
        stallMs,
        limits: checkedLimits.value,
      },
    };
  } catch (error) {
    if (error instanceof ToolError) return { ok: false, error: error.message };
    throw error;
  }
}

export function validateMonitorStop(raw: unknown): Checked<NormalizedStop> {
  // Some callers send no arguments at all for "stop everything".
  if (raw === undefined || raw === null) return { ok: true, value: { monitorId: null } };
  if (!isRecord(raw)) return { ok: false, error: "arguments: expected an object" };
  const extra = unknownField(raw, STOP_FIELDS);
  if (extra) return { ok: false, error: extra };
  const id = raw.monitor_id;
  if (id === undefined || id === null) return { ok: true, value: { monitorId: null } };
  if (typeof id !== "string") return { ok: false, error: "monitor_id: expected a string" };
  if (id.trim() === "") return { ok: false, error: "monitor_id: must not be empty (omit it to stop all)" };
  return { ok: true, value: { monitorId: id } };
}
