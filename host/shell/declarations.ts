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
    description: "Run a shell command as a job that can outlive the call.",
    promptSnippet: "Run shell commands, in the background too; replaces bash",
    parameters: ExecCommandParams,
    outputSchema: ProcessResultSchema,
  },
  write_stdin: {
    name: "write_stdin",
    label: "Write stdin",
    description: "Send input to a session, close its stdin, resize its PTY, and/or wait for and read its new output.",
    promptSnippet: "Send input to / read output of a shell session",
    parameters: WriteStdinParams,
    outputSchema: ProcessResultSchema,
  },
  list_sessions: {
    name: "list_sessions",
    label: "List sessions",
    description: "List running and retained finished sessions. Read-only: consumes no output, suppresses no wake.",
    promptSnippet: "List shell sessions",
    parameters: ListSessionsParams,
    outputSchema: ListResultSchema,
  },
  set_on_exit: {
    name: "set_on_exit",
    label: "Set on_exit",
    description: "Change a session's on_exit without killing it.",
    promptSnippet: "Arm or disarm a shell session's wake on exit",
    parameters: SetOnExitParams,
    outputSchema: SetOnExitResultSchema,
  },
  kill_session: {
    name: "kill_session",
    label: "Kill session",
    description: "Stop a session's process group: signal, then SIGKILL after 2 s. killed: false: not confirmed, the job is still yours.",
    promptSnippet: "Stop a shell session",
    parameters: KillSessionParams,
    outputSchema: KillResultSchema,
  },
} as const satisfies Record<ShellToolName, ShellToolDeclaration>;
