/**
 * Parameter schemas of the five shell tools, as declared to the model. Every object is closed
 * (`additionalProperties: false`), so Pi itself rejects an unknown field before a tool runs; `validate.ts` checks
 * the same rules again with messages that name the fields, for calls that reach a tool another way.
 */
import { Type } from "typebox";
import { DEFAULT_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS, PTY_COLS, PTY_ROWS } from "./limits.ts";

const closed = { additionalProperties: false } as const;

const Raw = Type.Optional(
  Type.Boolean({ description: "Output as printed, head and tail only. Default folds repeated lines and digests an over-long middle; the log keeps every byte." }),
);

const SessionId = Type.Integer({ minimum: 1, description: "The session_id a previous exec_command returned." });
const OnExit = Type.Union([Type.Literal("none"), Type.Literal("wake")], {
  description:
    '"wake": when the job ends unobserved, one follow-up message starts a new turn. Choose it for finite work whose result the task needs; keep "none" for servers, REPLs and start-only requests.',
});

/** exec_command's and monitor_start's resource limits over the job's whole process tree. */
export const Limits = Type.Object(
  {
    memory_mb: Type.Optional(Type.Number()),
    cpu_seconds: Type.Optional(Type.Number()),
    processes: Type.Optional(Type.Integer()),
  },
  // Unknown fields are refused by name (host/shell/limit-params.ts): the schema stays short, as every request pays it.
  { description: "Stop the job once its process tree passes any: resident MiB, CPU seconds used, live processes" },
);

export const ExecCommandParams = Type.Object(
  {
    cmd: Type.String({ minLength: 1, description: "Shell command line, run as `shell -c cmd` in its own process group." }),
    workdir: Type.Optional(Type.String({ description: "Working directory; defaults to Pi's cwd. Relative paths resolve against it." })),
    tty: Type.Optional(Type.Boolean({ description: "Run in a pseudo-terminal (interactive programs, REPLs). Default false: pipes." })),
    yield_time_ms: Type.Optional(
      Type.Number({ minimum: 0, description: "How long this call waits before returning (250–30000 ms, default 10000). Not a timeout." }),
    ),
    timeout_seconds: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: MAX_TIMEOUT_SECONDS,
        description: `Hard lifetime: the job is stopped after this long whether or not anyone waits (default ${DEFAULT_TIMEOUT_SECONDS}, at most ${MAX_TIMEOUT_SECONDS}).`,
      }),
    ),
    on_exit: Type.Optional(OnExit),
    shell: Type.Optional(Type.String({ minLength: 1, description: "Shell program (default $SHELL, then /bin/sh)." })),
    ready: Type.Optional(
      Type.Object(
        {
          pattern: Type.Optional(Type.String({ description: "Output regex" })),
          port: Type.Optional(Type.Integer()),
          http: Type.Optional(Type.String({ description: "URL or path on port; GET<500" })),
          timeout_ms: Type.Optional(Type.Number()),
        },
        { ...closed, description: "Servers: return once all hold; job keeps running" },
      ),
    ),
    stall_seconds: Type.Optional(Type.Number({ description: "Silent+idle this long: stalled" })),
    on_stall: Type.Optional(Type.Union([Type.Literal("none"), Type.Literal("wake")])),
    limits: Type.Optional(Limits),
    raw: Raw,
  },
  closed,
);

export const WriteStdinParams = Type.Object(
  {
    session_id: SessionId,
    chars: Type.Optional(
      Type.String({ description: "Text to send; C-style escapes are decoded (\\r is Enter in a PTY, \\u0003 is Ctrl-C)." }),
    ),
    chars_b64: Type.Optional(Type.String({ description: "Raw bytes to send, base64. Mutually exclusive with chars." })),
    end_stdin: Type.Optional(Type.Boolean({ description: "Close stdin after any input (pipes only)." })),
    yield_time_ms: Type.Optional(
      Type.Number({
        minimum: 0,
        description:
          "Wait before returning. With input: 250–30000 ms, default 250. Without input: 0 returns unread output at once; otherwise at least (and by default) 5000.",
      }),
    ),
    yield_until: Type.Optional(
      Type.String({ description: "Absolute UTC deadline for an empty wait, e.g. 2030-01-01T12:00:00Z. Excludes yield_time_ms and input." }),
    ),
    cols: Type.Optional(Type.Integer({ description: `PTY resize: columns ${PTY_COLS.min}–${PTY_COLS.max}; requires rows.` })),
    rows: Type.Optional(Type.Integer({ description: `PTY resize: rows ${PTY_ROWS.min}–${PTY_ROWS.max}; requires cols.` })),
    raw: Raw,
  },
  closed,
);

export const ListSessionsParams = Type.Object({}, closed);

export const SetOnExitParams = Type.Object({ session_id: SessionId, on_exit: OnExit }, closed);

export const KillSessionParams = Type.Object(
  {
    session_id: SessionId,
    signal: Type.Optional(
      Type.Union([Type.Literal("SIGTERM"), Type.Literal("SIGKILL"), Type.Literal("SIGINT"), Type.Literal("SIGHUP"), Type.Literal("SIGQUIT")], {
        description: "First signal to the process group (default SIGTERM); SIGKILL follows after 2 s.",
      }),
    ),
  },
  closed,
);

export const FIELDS = {
  exec_command: ["cmd", "workdir", "tty", "yield_time_ms", "timeout_seconds", "on_exit", "shell", "ready", "stall_seconds", "on_stall", "limits", "raw"],
  write_stdin: ["session_id", "chars", "chars_b64", "end_stdin", "yield_time_ms", "yield_until", "cols", "rows", "raw"],
  list_sessions: [],
  set_on_exit: ["session_id", "on_exit"],
  kill_session: ["session_id", "signal"],
} as const satisfies Record<string, readonly string[]>;

export type ShellToolName = keyof typeof FIELDS;
