/**
 * The shell tools' transcript rows, in the monitor bands' vocabulary. Pure: a tool's call arguments or its stored
 * result (`details`, so a restored session draws the same rows) in, styled lines out.
 *
 *   [shell] running · node -i · session 1 · ctrl+o to expand      pending
 *     > [1, 2, 3].map((x) => x * 7)                                 at most the last five output lines
 *     [ 7, 14, 21 ]
 *   [shell] exited 0 · npm test · 12.4s                            success
 *   [shell] wake · 2 jobs finished                                  the wake message
 *
 * Collapsed, a row is its heading and at most five output lines; expanded, it adds the supervision fields as
 * `Label: value` rows, the log path and the whole output of the read (already bounded by the tool). What each row
 * reads is ui/shell-view.ts.
 */
import type { Tone } from "./views.ts";
import type { KillRowView, ListRowView, ProcessRowView, SessionRowView, SetOnExitRowView, ShellEnding, SupervisionView, WakeView } from "./shell-view.ts";
import { bandHeading, TONE_STYLE, type BandOptions } from "./bands.ts";
import { renderFields } from "./fields.ts";
import { bytes, duration, elapsed } from "../shared/format.ts";
import { safe, sanitizeBlock } from "../shared/sanitize.ts";
import { codePoints, fit, headPoints } from "./text.ts";
import type { DetailField } from "./views.ts";

export const SHELL_TAG = "shell";
/** Output lines a collapsed row shows. */
export const COLLAPSED_OUTPUT_LINES = 5;
/** Code points of a command in a heading; the whole command is in the expanded row. */
const HEADING_COMMAND_POINTS = 48;

export function shellTone(r: ShellEnding): Tone {
  switch (r.status) {
    case "running":
      return "pending";
    case "exited":
      return r.exit_code === 0 ? "success" : "error";
    case "stopped":
      return "stopped";
    default:
      return "error";
  }
}

/** `running`, `exited 0`, `exited SIGKILL`, `stopped`, `timed out`, `failed`. */
export function shellOutcome(r: ShellEnding): string {
  switch (r.status) {
    case "exited":
      return r.exit_code !== null && r.exit_code !== undefined ? `exited ${r.exit_code}` : `exited ${r.signal ?? "on a signal"}`;
    case "timed_out":
      return "timed out";
    default:
      return r.status;
  }
}

/**
 * A command on one line, sanitized and shortened (every row that shows it on one line uses this). Results stored
 * before set_on_exit and kill_session carried the command have none.
 */
function command(cmd: string | undefined): string {
  const flat = safe((cmd ?? "").replace(/\s+/g, " ").trim());
  return codePoints(flat) <= HEADING_COMMAND_POINTS ? flat : `${headPoints(flat, HEADING_COMMAND_POINTS - 1)}…`;
}

function heading(outcome: string, facts: readonly string[], tone: Tone, options: BandOptions): string {
  return bandHeading(SHELL_TAG, outcome, facts.filter((fact) => fact !== ""), options, TONE_STYLE[tone].fg);
}

function fields(list: readonly DetailField[], options: BandOptions): string[] {
  return renderFields(list, {
    width: options.width,
    theme: options.theme,
    fullValues: true,
    ...(options.highlight ? { highlight: options.highlight } : {}),
  });
}

const inline = (label: string, value: string): DetailField => ({ label, value, layout: "inline" });

/** The output's last lines, indented, in the output colour; trailing blank lines do not count. */
function outputTail(output: string, options: BandOptions): string[] {
  const lines = sanitizeBlock(output).lines;
  while (lines.length > 0 && lines[lines.length - 1]!.trim() === "") lines.pop();
  const indent = options.width >= 24 ? "  " : "";
  return lines.slice(-COLLAPSED_OUTPUT_LINES).map((line) => fit(indent + options.theme.fg("toolOutput", line), options.width));
}

export function supervisionFields(s: SupervisionView): DetailField[] {
  const list = [inline("State", s.state)];
  if (s.stop_reason !== null) list.push(inline("Stop reason", s.stop_reason));
  if (s.deadline_utc !== null) list.push(inline("Deadline", s.deadline_utc));
  if (s.quiet_ms !== null) list.push(inline("Quiet for", elapsed(s.quiet_ms)));
  list.push(inline("Log", `${bytes(s.log_bytes)}${s.log_truncated ? " (truncated)" : ""}`));
  list.push(inline("Cleanup", s.cleanup));
  if (s.waiting_for_input) list.push(inline("Waiting for input", "yes"));
  if (s.stalled) list.push(inline("Stalled", "yes"));
  return list;
}

// ── exec_command and write_stdin ────────────────────────────────────────────────────────────────────────────────

export function processRowLines(r: ProcessRowView, options: BandOptions): string[] {
  const tone = shellTone(r);
  const facts = r.running ? [command(r.cmd), `session ${r.session_id}`] : [command(r.cmd), elapsed(r.elapsed_ms)];
  const lines = [heading(shellOutcome(r), facts, tone, options)];
  if (!options.expanded) return [...lines, ...outputTail(r.output, options)];
  const list: DetailField[] = [{ label: "Command", value: r.cmd, layout: "code" }];
  if (r.session_id !== undefined) list.push(inline("Session", String(r.session_id)));
  if (r.signal) list.push(inline("Signal", r.signal));
  if (r.failure) list.push(inline("Failure", `${r.failure.reason}: ${r.failure.message}`));
  list.push(
    inline("Elapsed", elapsed(r.elapsed_ms)),
    inline("Wait", `${r.wait_mode} · ${r.wait_status}`),
    inline("On exit", r.on_exit),
    inline("Terminal", r.tty ? "PTY" : "pipes"),
    ...supervisionFields(r.supervision),
    inline("Log path", r.log_path ?? "none"),
  );
  for (const note of r.notes) list.push(inline("Note", note));
  const omitted = r.output_omitted_bytes > 0 ? `, ${bytes(r.output_omitted_bytes)} omitted` : "";
  const replay = r.output_replayed ? ", replayed" : "";
  // Results stored before output was rendered do not say how it was made.
  const rendered = r.output_rendered !== undefined ? `, ${r.output_rendered}` : "";
  const label = `Output (${bytes(r.output_bytes)} read${omitted}${rendered}${replay})`;
  const output = r.output.replace(/\n+$/, "");
  list.push(output === "" ? inline(label, "none") : { label, value: output, layout: "block" });
  return [...lines, ...fields(list, options)];
}

// ── list_sessions ───────────────────────────────────────────────────────────────────────────────────────────────

function sessionLine(s: SessionRowView): string {
  return `${s.session_id} · ${shellOutcome(s)} · ${command(s.cmd)}`;
}

export function listRowLines(r: ListRowView, options: BandOptions): string[] {
  const tone: Tone = r.active_count > 0 ? "pending" : "success";
  const facts = r.sessions.length === 0 ? ["none"] : [`${r.active_count} running`, `${r.completed_count} finished`];
  const lines = [heading("sessions", facts, tone, options)];
  if (!options.expanded) {
    const shown = r.sessions.slice(0, COLLAPSED_OUTPUT_LINES).map((s) => fit(`  ${options.theme.fg("toolOutput", sessionLine(s))}`, options.width));
    if (r.sessions.length > shown.length) shown.push(fit(options.theme.fg("dim", `  … ${r.sessions.length - shown.length} more`), options.width));
    return [...lines, ...shown];
  }
  const list: DetailField[] = [];
  for (const s of r.sessions) {
    list.push(
      inline(`Session ${s.session_id}`, `${shellOutcome(s)} · ${s.tty ? "pty" : "pipes"} · on exit ${s.on_exit}${s.running ? "" : s.collected ? " · collected" : " · not collected"}`),
      { label: "Command", value: s.cmd, layout: "code" },
      inline("Elapsed", elapsed(s.elapsed_ms)),
      inline("Output", `${bytes(s.output_bytes_total)} (unread ${bytes(s.output_pending_bytes)})`),
      ...supervisionFields(s.supervision),
      ...(s.listening !== undefined && s.listening !== null && s.listening.length > 0 ? [inline("Listening", s.listening.join(", "))] : []),
      inline("Log path", s.log_path ?? "none"),
    );
  }
  return [...lines, ...fields(list, options)];
}

// ── set_on_exit and kill_session ────────────────────────────────────────────────────────────────────────────────

const EFFECT_WORDS: Record<SetOnExitRowView["effect"], string> = {
  armed: "wake armed",
  disarmed: "wake disarmed",
  unchanged: "on exit unchanged",
  already_notified: "already notified",
};

export function setOnExitTone(r: SetOnExitRowView): Tone {
  return r.effect === "already_notified" ? "stopped" : r.running ? "pending" : shellTone(r);
}

export function setOnExitRowLines(r: SetOnExitRowView, options: BandOptions): string[] {
  const tone = setOnExitTone(r);
  const lines = [heading(EFFECT_WORDS[r.effect], [command(r.cmd), `session ${r.session_id}`], tone, options)];
  if (!options.expanded) return lines;
  return [
    ...lines,
    ...fields(
      [
        inline("On exit", `${r.on_exit} (was ${r.previous_on_exit})`),
        inline("Job", r.running ? "running" : shellOutcome(r)),
        { label: "Command", value: r.cmd ?? "", layout: "code" },
      ],
      options,
    ),
  ];
}

export function killTone(r: KillRowView): Tone {
  return r.killed || r.already_exited ? "stopped" : "error";
}

export function killRowLines(r: KillRowView, options: BandOptions): string[] {
  const outcome = r.already_exited ? "removed" : r.killed ? "stopped" : "stop unconfirmed";
  const tone = killTone(r);
  const lines = [heading(outcome, [command(r.cmd), `session ${r.session_id}`], tone, options)];
  if (!options.expanded) return lines;
  const list: DetailField[] = [
    inline("Signal", r.signal),
    inline("Escalated", r.escalated ? "yes (SIGKILL after the grace)" : "no"),
    inline("Message", r.message),
    { label: "Command", value: r.cmd ?? "", layout: "code" },
    ...supervisionFields(r.supervision),
    inline("Log path", r.log_path ?? "none"),
  ];
  return [...lines, ...fields(list, options)];
}

// ── the wake message ────────────────────────────────────────────────────────────────────────────────────────────

export function wakeTone(details: WakeView): Tone {
  return details.sessions.some((s) => shellTone(s) === "error") ? "error" : "success";
}

export function wakeRowLines(details: WakeView, options: BandOptions): string[] {
  const count = details.sessions.length + details.omitted;
  const lines = [heading("wake", [`${count} ${count === 1 ? "job" : "jobs"} finished`], wakeTone(details), options)];
  const rows = details.sessions.map((s) => `${s.session_id} · ${shellOutcome(s)} · ${command(s.cmd)} · ${elapsed(s.elapsed_ms)}`);
  if (!options.expanded) {
    const shown = rows.slice(0, COLLAPSED_OUTPUT_LINES).map((row) => fit(`  ${options.theme.fg("toolOutput", row)}`, options.width));
    const more = count - shown.length;
    if (more > 0) shown.push(fit(options.theme.fg("dim", `  … ${more} more`), options.width));
    return [...lines, ...shown];
  }
  const list: DetailField[] = [];
  for (const s of details.sessions) {
    list.push(
      inline(`Session ${s.session_id}`, `${shellOutcome(s)} after ${elapsed(s.elapsed_ms)}${s.failure ? ` (${s.failure})` : ""}`),
      { label: "Command", value: s.cmd, layout: "code" },
      inline("Log path", `${s.log_path ?? "none"}${s.log_truncated ? " (truncated)" : ""}`),
    );
  }
  if (details.omitted > 0) list.push(inline("More", `${details.omitted} (see list_sessions)`));
  return [...lines, ...fields(list, options)];
}

// ── calls (drawn until the result arrives) ─────────────────────────────────────────────────────────────────────

/** The pending row of a call, from its raw arguments (which may be incomplete while the model streams them). */
export function callRowLines(toolName: string, args: Record<string, unknown>, options: BandOptions): string[] {
  const text = (key: string): string | null => (typeof args[key] === "string" ? (args[key] as string) : null);
  const number = (key: string): number | null => (typeof args[key] === "number" ? (args[key] as number) : null);
  const session = number("session_id") !== null ? `session ${number("session_id")}` : "session ?";
  let outcome: string;
  let facts: string[];
  const list: DetailField[] = [];
  switch (toolName) {
    case "exec_command": {
      outcome = "starting";
      facts = [command(text("cmd") ?? "")];
      list.push({ label: "Command", value: text("cmd") ?? "", layout: "code" });
      if (text("workdir") !== null) list.push(inline("Workdir", text("workdir")!));
      if (args.tty === true) list.push(inline("Terminal", "PTY"));
      if (number("timeout_seconds") !== null) list.push(inline("Timeout", duration(number("timeout_seconds")! * 1000)));
      if (text("on_exit") !== null) list.push(inline("On exit", text("on_exit")!));
      break;
    }
    case "write_stdin": {
      const input = text("chars") ?? (text("chars_b64") !== null ? "(base64 bytes)" : null);
      outcome = input !== null ? "input" : "reading";
      facts = [session, ...(input !== null ? [input] : [])];
      if (input !== null) list.push(inline("Input", input));
      break;
    }
    case "list_sessions":
      outcome = "listing sessions";
      facts = [];
      break;
    case "set_on_exit":
      outcome = `on exit ${text("on_exit") ?? "?"}`;
      facts = [session];
      break;
    default:
      outcome = "stopping";
      facts = [session, ...(text("signal") !== null ? [text("signal")!] : [])];
  }
  const lines = [heading(outcome, facts, "pending", { ...options, expandKey: list.length > 0 ? options.expandKey : "" })];
  return options.expanded ? [...lines, ...fields(list, options)] : lines;
}

export function errorRowLines(message: string, options: BandOptions): string[] {
  return [heading("error", [message], "error", { ...options, expandKey: "" })];
}
