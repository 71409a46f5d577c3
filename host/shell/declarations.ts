/**
 * What the model sees of the five shell tools besides their parameters (params.ts): each tool's description, its
 * line in the system prompt's tool list (its prompt snippet) and the schema of its structured result. Kept apart
 * from the registration (install.ts) so that bench/tokens.ts measures exactly what is registered.
 */
import type { TSchema } from "typebox";
import { ExecCommandParams, KillSessionParams, ListSessionsParams, SetOnExitParams, WriteStdinParams, type ShellToolName } from "./params.ts";
import { KillResultSchema, ListResultSchema, ProcessResultSchema, SetOnExitResultSchema } from "./result-schemas.ts";

export interface ShellToolDeclaration {
  name: ShellToolName;
  label: string;
  description: string;
  promptSnippet: string;
  parameters: TSchema;
  outputSchema: TSchema;
}

export const SHELL_TOOLS = {
  exec_command: {
    name: "exec_command",
    label: "Exec command",
    description:
      "Run a shell command as a background-capable job. Returns its exit result if it ends within yield_time_ms, otherwise a session_id to use with write_stdin, set_on_exit and kill_session. timeout_seconds is the hard lifetime. Set on_exit: \"wake\" for finite work whose result you need.",
    promptSnippet: "Run shell commands (background-capable, interactive with tty:true); replaces bash",
    parameters: ExecCommandParams,
    outputSchema: ProcessResultSchema,
  },
  write_stdin: {
    name: "write_stdin",
    label: "Write stdin",
    description:
      "Send input to a running session (chars with C escapes, or chars_b64), close pipe stdin (end_stdin), resize its PTY (cols+rows), and/or wait for and read its new output. yield_time_ms: 0 with no input reads unread output immediately.",
    promptSnippet: "Send input to / read output of a shell session",
    parameters: WriteStdinParams,
    outputSchema: ProcessResultSchema,
  },
  list_sessions: {
    name: "list_sessions",
    label: "List sessions",
    description:
      "List running and retained completed shell sessions with supervision metadata. Read-only: consumes no output and suppresses no notification.",
    promptSnippet: "List shell sessions",
    parameters: ListSessionsParams,
    outputSchema: ListResultSchema,
  },
  set_on_exit: {
    name: "set_on_exit",
    label: "Set on_exit",
    description: 'Arm ("wake") or disarm ("none") the follow-up notification for a session\'s completion, without killing it.',
    promptSnippet: "Arm or disarm a shell session's wake on exit",
    parameters: SetOnExitParams,
    outputSchema: SetOnExitResultSchema,
  },
  kill_session: {
    name: "kill_session",
    label: "Kill session",
    description:
      "Stop a session's whole process group (signal, then SIGKILL after 2 s). killed: false means the stop is not confirmed and the session stays registered.",
    promptSnippet: "Stop a shell session",
    parameters: KillSessionParams,
    outputSchema: KillResultSchema,
  },
} as const satisfies Record<ShellToolName, ShellToolDeclaration>;
