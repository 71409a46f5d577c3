/**
 * Parameter schemas of the five shell tools, as declared to the model. Every object is closed
 * (`additionalProperties: false`), so Pi itself rejects an unknown field before a tool runs; `validate.ts` checks
 * the same rules again with messages that name the fields, for calls that reach a tool another way.
 */
import { Type } from "typebox";
import { DEFAULT_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS, PERSIST_DEFAULT_TIMEOUT_SECONDS, PTY_COLS, PTY_ROWS } from "./limits.ts";
import { Limits } from "../tools/limits.ts";
import { Ready } from "../tools/ready.ts";

const closed = { additionalProperties: false } as const;

// Every word here is sent with every request. The shell-jobs guidance (guidance.ts) carries the workflow (when to
// wake, how to read, what folded output means); a description says only what its field does and what the schema
// cannot (ranges the tool clamps, defaults it resolves, exclusions).

/** A plain string enum rather than a union of literals: shorter, and some providers reject anyOf/const in parameters. */
const oneOf = <T extends string>(values: readonly T[], extra: { default?: T; description?: string } = {}) =>
  Type.Unsafe<T>({ type: "string", enum: values, ...extra });

const Raw = Type.Optional(Type.Boolean({ description: "Output as printed, not folded" }));

const SessionId = Type.Integer({ minimum: 1 });
const ON_EXIT = ["none", "wake"] as const;

export const ExecCommandParams = Type.Object(
  {
    cmd: Type.String({ minLength: 1 }),
    workdir: Type.Optional(Type.String({ description: "Default: Pi's cwd" })),
    tty: Type.Optional(Type.Boolean({ description: "PTY, for interactive programs (default: pipes)" })),
    yield_time_ms: Type.Optional(Type.Number({ minimum: 0, description: "250–30000, default 10000" })),
    timeout_seconds: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: MAX_TIMEOUT_SECONDS,
        default: DEFAULT_TIMEOUT_SECONDS,
        description: `With persist: default ${PERSIST_DEFAULT_TIMEOUT_SECONDS}`,
      }),
    ),
    on_exit: Type.Optional(oneOf(ON_EXIT, { default: "none" })),
    shell: Type.Optional(Type.String({ minLength: 1, description: "Default $SHELL, else /bin/sh" })),
    ready: Type.Optional(Ready),
    stall_seconds: Type.Optional(Type.Number({ description: "Silent+idle this long: stalled" })),
    on_stall: Type.Optional(oneOf(ON_EXIT)),
    limits: Type.Optional(Limits),
    persist: Type.Optional(Type.Boolean({ description: "Outlive Pi; the next Pi here adopts it. Pipes only (no tty)" })),
    raw: Raw,
  },
  closed,
);

export const WriteStdinParams = Type.Object(
  {
    session_id: SessionId,
    chars: Type.Optional(Type.String({ description: "C escapes decoded: \\r is Enter, \\u0003 Ctrl-C" })),
    chars_b64: Type.Optional(Type.String({ description: "Raw bytes, base64; not with chars" })),
    end_stdin: Type.Optional(Type.Boolean({ description: "Close stdin after any input (pipes only)" })),
    yield_time_ms: Type.Optional(
      Type.Number({ minimum: 0, description: "With input: 250–30000, default 250. Without: 0 reads at once, else at least (and by default) 5000" }),
    ),
    yield_until: Type.Optional(Type.String({ description: "UTC time to wait until, e.g. 2030-01-01T12:00:00Z; not with yield_time_ms or input" })),
    cols: Type.Optional(Type.Integer({ description: `PTY resize, with rows: ${PTY_COLS.min}–${PTY_COLS.max}` })),
    rows: Type.Optional(Type.Integer({ description: `PTY resize, with cols: ${PTY_ROWS.min}–${PTY_ROWS.max}` })),
    raw: Raw,
  },
  closed,
);

export const ListSessionsParams = Type.Object({}, closed);

export const SetOnExitParams = Type.Object({ session_id: SessionId, on_exit: oneOf(ON_EXIT) }, closed);

export const KillSessionParams = Type.Object(
  { session_id: SessionId, signal: Type.Optional(oneOf(["SIGTERM", "SIGKILL", "SIGINT", "SIGHUP", "SIGQUIT"] as const, { default: "SIGTERM" })) },
  closed,
);

export const FIELDS = {
  exec_command: ["cmd", "workdir", "tty", "yield_time_ms", "timeout_seconds", "on_exit", "shell", "ready", "stall_seconds", "on_stall", "limits", "persist", "raw"],
  write_stdin: ["session_id", "chars", "chars_b64", "end_stdin", "yield_time_ms", "yield_until", "cols", "rows", "raw"],
  list_sessions: [],
  set_on_exit: ["session_id", "on_exit"],
  kill_session: ["session_id", "signal"],
} as const satisfies Record<string, readonly string[]>;

export type ShellToolName = keyof typeof FIELDS;
