/**
 * The monitor part of the protocol: the result contract a monitor actor enforces and the terminal outcome it
 * reports. Field names follow the monitor spec's structured result (`result`, `resultParseError`,
 * `capturesTruncated`, `outputTruncated`), because codemode scripts read them directly.
 */
import { Type, type Static } from "typebox";

export const Completion = Type.Union([Type.Literal("match"), Type.Literal("exit")]);
export type Completion = Static<typeof Completion>;

/** What the model asked for: the regexes and when the contract may decide. */
export const MonitorContract = Type.Object(
  {
    resultPattern: Type.String(),
    failurePattern: Type.Union([Type.String(), Type.Null()]),
    completion: Completion,
  },
  { additionalProperties: false },
);
export type MonitorContract = Static<typeof MonitorContract>;

export const MonitorStatus = Type.Union([
  Type.Literal("success"),
  Type.Literal("failure"),
  Type.Literal("result_missing"),
  Type.Literal("timeout"),
  Type.Literal("stopped"),
]);
export type MonitorStatus = Static<typeof MonitorStatus>;

export const LineSource = Type.Union([Type.Literal("stdout"), Type.Literal("stderr")]);
export type LineSource = Static<typeof LineSource>;

/** One diagnostic tail entry; adjacent identical lines collapse into one entry with a count. */
export const DiagnosticLine = Type.Object(
  {
    source: LineSource,
    text: Type.String(),
    count: Type.Integer({ minimum: 1 }),
    /** The displayed text was cut at the 10 KiB display bound. */
    clipped: Type.Boolean(),
  },
  { additionalProperties: false },
);
export type DiagnosticLine = Static<typeof DiagnosticLine>;

/** The terminal outcome of a monitor: everything the report, the structured result and the UI need. */
export const MonitorOutcome = Type.Object(
  {
    status: MonitorStatus,
    completion: Completion,
    /** "match" when the contract, not the process, ended the run. */
    stoppedBy: Type.Union([Type.Literal("match"), Type.Null()]),
    matched: Type.Union([Type.String(), Type.Null()]),
    matchedTruncated: Type.Boolean(),
    matchedSource: Type.Union([LineSource, Type.Null()]),
    captures: Type.Record(Type.String(), Type.String()),
    capturesTruncated: Type.Boolean(),
    /** Present when a `json` capture parsed; `false`, `null` and `0` are valid values. */
    hasResult: Type.Boolean(),
    result: Type.Optional(Type.Unknown()),
    resultParseError: Type.Union([Type.String(), Type.Null()]),
    exitCode: Type.Union([Type.Integer(), Type.Null()]),
    signal: Type.Union([Type.String(), Type.Null()]),
    /** Machine reason for non-passing outcomes: timeout, matcher_line_limit, matcher_queue_limit, … */
    reason: Type.Union([Type.String(), Type.Null()]),
    output: Type.Array(DiagnosticLine),
    outputTruncated: Type.Boolean(),
    /** Secrets replaced with `[redacted:NAME]` in this outcome; present only when there were any. */
    redactions: Type.Optional(Type.Integer({ minimum: 1 })),
    /** A capture (or the parsed result) is among what was redacted: the payload is not the command's verbatim output. */
    capturesRedacted: Type.Optional(Type.Literal(true)),
  },
  { additionalProperties: false },
);
export type MonitorOutcome = Static<typeof MonitorOutcome>;
