/**
 * Turns raw tool arguments into requests that cannot hold a wrong combination. Every rejection names the fields
 * involved, so the model can fix its call in one step.
 */
import { decodeCEscapes } from "./escapes.ts";
import { FIELDS, type ShellToolName } from "./params.ts";
import { DEFAULT_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS, MAX_WRITE_QUEUE_BYTES, PERSIST_DEFAULT_TIMEOUT_SECONDS, PTY_COLS, PTY_ROWS } from "./limits.ts";
import type { WaitKind } from "./waits.ts";
import type { ReadySpec, ResourceLimits } from "../../mailbox/spec.ts";
import type { StopSignal } from "../../mailbox/control.ts";
import { readyOf, stallOf } from "../tools/ready.ts";
import { limitsOf } from "../tools/limits.ts";
import { fail, type Checked } from "../tools/checked.ts";

export type OnExit = "none" | "wake";

export interface ExecRequest {
  cmd: string;
  workdir: string | null;
  tty: boolean;
  yieldTimeMs: number | undefined;
  timeoutMs: number;
  onExit: OnExit;
  shell: string | null;
  /** Return once these hold instead of at the yield; null: the yield rules. */
  ready: ReadySpec | null;
  /** Quiet time after which an idle job is stalled; null: not judged. */
  stallMs: number | null;
  /** Wake the model when the job stalls or waits for input (on_exit "wake" implies it). */
  onStall: OnExit;
  /** Stop the job past any of these; null: no limit. */
  limits: ResourceLimits | null;
  /** Run under a keeper outside Pi, so that the job outlives Pi (host/persist/keeper.ts). */
  persist: boolean;
  /** Output as printed instead of folded. */
  raw: boolean;
}

export interface WriteRequest {
  sessionId: number;
  /** Bytes to send, already decoded; null when the call sends nothing. */
  input: Uint8Array | null;
  endStdin: boolean;
  resize: { cols: number; rows: number } | null;
  yieldTimeMs: number | undefined;
  yieldUntil: string | undefined;
  /** Which wait rules apply: input-bearing or an empty poll. */
  waitKind: Exclude<WaitKind, "exec">;
  /** Output as printed instead of folded. */
  raw: boolean;
}

export interface SetOnExitRequest {
  sessionId: number;
  onExit: OnExit;
}

export interface KillRequest {
  sessionId: number;
  signal: StopSignal;
}

/** Fields that belong to one tool, named when the model puts them on another. */
const HOME: Readonly<Record<string, string>> = {
  end_stdin: "write_stdin",
  cols: "write_stdin",
  rows: "write_stdin",
  chars: "write_stdin",
  chars_b64: "write_stdin",
  yield_until: "write_stdin",
  cmd: "exec_command",
  tty: "exec_command",
  timeout_seconds: "exec_command",
  on_exit: "exec_command or set_on_exit",
  ready: "exec_command",
  stall_seconds: "exec_command or monitor_start",
  on_stall: "exec_command",
  persist: "exec_command",
  signal: "kill_session",
};

/** Rejects anything that is not a plain object or that carries a field the tool does not accept. */
function checkObject(tool: ShellToolName, raw: unknown): Checked<Record<string, unknown>> {
  if (raw === undefined || raw === null) raw = {};
  if (typeof raw !== "object" || Array.isArray(raw)) return fail(`${tool}: arguments must be an object`);
  const record = raw as Record<string, unknown>;
  const allowed: readonly string[] = FIELDS[tool];
  const unknown = Object.keys(record).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) {
    const hints = unknown.filter((key) => HOME[key] !== undefined).map((key) => `${key} belongs to ${HOME[key]}`);
    const accepted = allowed.length === 0 ? "it takes no fields" : `accepted: ${allowed.join(", ")}`;
    return fail(`${tool}: unknown field${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")} (${[...hints, accepted].join("; ")})`);
  }
  // Pi turns an explicit null into "omitted" for optional fields; direct callers get the same treatment.
  const present: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) if (value !== null && value !== undefined) present[key] = value;
  return { ok: true, value: present };
}

function sessionIdOf(tool: ShellToolName, value: unknown): Checked<number> {
  const n = typeof value === "string" && /^\d+$/.test(value.trim()) ? Number(value.trim()) : value;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 1) {
    return fail(`${tool}: session_id must be a positive integer returned by exec_command (got ${JSON.stringify(value)})`);
  }
  return { ok: true, value: n };
}

/** The arguments of a tool that acts on one session: its fields, and the session id they name. */
function sessionCall(tool: ShellToolName, raw: unknown): Checked<{ fields: Record<string, unknown>; sessionId: number }> {
  const object = checkObject(tool, raw);
  if (!object.ok) return object;
  const sessionId = sessionIdOf(tool, object.value.session_id);
  if (!sessionId.ok) return sessionId;
  return { ok: true, value: { fields: object.value, sessionId: sessionId.value } };
}

function optionalString(tool: ShellToolName, field: string, value: unknown, nonEmpty: boolean): Checked<string | undefined> {
  if (value === undefined) return { ok: true, value: undefined };
  if (typeof value !== "string") return fail(`${tool}: ${field} must be a string`);
  if (nonEmpty && value.trim() === "") return fail(`${tool}: ${field} must not be empty`);
  return { ok: true, value };
}

function optionalBoolean(tool: ShellToolName, field: string, value: unknown): Checked<boolean | undefined> {
  if (value === undefined) return { ok: true, value: undefined };
  if (typeof value !== "boolean") return fail(`${tool}: ${field} must be true or false`);
  return { ok: true, value };
}

function optionalMs(tool: ShellToolName, field: string, value: unknown): Checked<number | undefined> {
  if (value === undefined) return { ok: true, value: undefined };
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    return fail(`${tool}: ${field} must be a non-negative number of milliseconds (got ${JSON.stringify(value)})`);
  }
  return { ok: true, value };
}

function onExitOf(tool: ShellToolName, value: unknown, required: boolean): Checked<OnExit> {
  if (value === undefined && !required) return { ok: true, value: "none" };
  if (value !== "none" && value !== "wake") return fail(`${tool}: on_exit must be "none" or "wake" (got ${JSON.stringify(value)})`);
  return { ok: true, value };
}

export function validateExec(raw: unknown): Checked<ExecRequest> {
  const tool = "exec_command";
  const object = checkObject(tool, raw);
  if (!object.ok) return object;
  const a = object.value;
  if (typeof a.cmd !== "string" || a.cmd.trim() === "") return fail(`${tool}: cmd is required and must be a non-empty string`);
  const workdir = optionalString(tool, "workdir", a.workdir, true);
  if (!workdir.ok) return workdir;
  const tty = optionalBoolean(tool, "tty", a.tty);
  if (!tty.ok) return tty;
  const yieldTimeMs = optionalMs(tool, "yield_time_ms", a.yield_time_ms);
  if (!yieldTimeMs.ok) return yieldTimeMs;
  const persist = optionalBoolean(tool, "persist", a.persist);
  if (!persist.ok) return persist;
  let timeoutMs = (persist.value === true ? PERSIST_DEFAULT_TIMEOUT_SECONDS : DEFAULT_TIMEOUT_SECONDS) * 1000;
  if (a.timeout_seconds !== undefined) {
    const t = a.timeout_seconds;
    if (typeof t !== "number" || !Number.isFinite(t) || t <= 0 || t > MAX_TIMEOUT_SECONDS) {
      return fail(`${tool}: timeout_seconds must be a positive number of seconds, at most ${MAX_TIMEOUT_SECONDS} (got ${JSON.stringify(t)})`);
    }
    timeoutMs = Math.max(1, Math.round(t * 1000));
  }
  const onExit = onExitOf(tool, a.on_exit, false);
  if (!onExit.ok) return onExit;
  const shell = optionalString(tool, "shell", a.shell, true);
  if (!shell.ok) return shell;
  const ready = readyOf(tool, a.ready, timeoutMs);
  if (!ready.ok) return ready;
  if (ready.value !== null && yieldTimeMs.value !== undefined) {
    return fail(`${tool}: ready and yield_time_ms are mutually exclusive; ready.timeout_ms bounds the wait`);
  }
  const stallMs = stallOf(tool, a.stall_seconds);
  if (!stallMs.ok) return stallMs;
  if (a.on_stall !== undefined && a.on_stall !== "none" && a.on_stall !== "wake") {
    return fail(`${tool}: on_stall must be "none" or "wake" (got ${JSON.stringify(a.on_stall)})`);
  }
  const limits = limitsOf(tool, a.limits);
  if (!limits.ok) return limits;
  const rawOutput = optionalBoolean(tool, "raw", a.raw);
  if (!rawOutput.ok) return rawOutput;
  // What a keeper outside Pi cannot give: a terminal. Its processes carry a tag of their own, which ports, usage and
  // limits follow.
  if (persist.value === true && tty.value === true) {
    return fail(`${tool}: persist: true cannot be used with tty: true (a persisted job runs on pipes its keeper holds)`);
  }
  return {
    ok: true,
    value: {
      cmd: a.cmd,
      workdir: workdir.value ?? null,
      tty: tty.value ?? false,
      yieldTimeMs: yieldTimeMs.value,
      timeoutMs,
      onExit: onExit.value,
      shell: shell.value ?? null,
      ready: ready.value,
      stallMs: stallMs.value,
      onStall: (a.on_stall as OnExit | undefined) ?? "none",
      limits: limits.value,
      persist: persist.value ?? false,
      raw: rawOutput.value ?? false,
    },
  };
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;

export function validateWriteStdin(raw: unknown): Checked<WriteRequest> {
  const tool = "write_stdin";
  const call = sessionCall(tool, raw);
  if (!call.ok) return call;
  const { fields: a, sessionId } = call.value;
  const chars = optionalString(tool, "chars", a.chars, false);
  if (!chars.ok) return chars;
  const charsB64 = optionalString(tool, "chars_b64", a.chars_b64, false);
  if (!charsB64.ok) return charsB64;
  if (chars.value !== undefined && charsB64.value !== undefined) {
    return fail(`${tool}: chars and chars_b64 are mutually exclusive; send text with chars or raw bytes with chars_b64`);
  }
  const endStdin = optionalBoolean(tool, "end_stdin", a.end_stdin);
  if (!endStdin.ok) return endStdin;
  const yieldTimeMs = optionalMs(tool, "yield_time_ms", a.yield_time_ms);
  if (!yieldTimeMs.ok) return yieldTimeMs;
  const yieldUntil = optionalString(tool, "yield_until", a.yield_until, true);
  if (!yieldUntil.ok) return yieldUntil;
  const rawOutput = optionalBoolean(tool, "raw", a.raw);
  if (!rawOutput.ok) return rawOutput;

  let input: Uint8Array | null = null;
  if (chars.value !== undefined && chars.value.length > 0) {
    const decoded = decodeCEscapes(chars.value);
    if (!decoded.ok) return fail(`${tool}: ${decoded.error}`);
    input = decoded.bytes;
  } else if (charsB64.value !== undefined && charsB64.value.length > 0) {
    const compact = charsB64.value.replace(/\s+/g, "");
    if (!BASE64.test(compact)) return fail(`${tool}: chars_b64 is not valid base64`);
    input = new Uint8Array(Buffer.from(compact, "base64"));
  }
  if (input !== null && input.length > MAX_WRITE_QUEUE_BYTES) {
    return fail(`${tool}: ${chars.value !== undefined ? "chars" : "chars_b64"} is ${input.length} bytes, over the ${MAX_WRITE_QUEUE_BYTES}-byte write queue of a job; send it in parts`);
  }

  let resize: WriteRequest["resize"] = null;
  if (a.cols !== undefined || a.rows !== undefined) {
    if (a.cols === undefined || a.rows === undefined) return fail(`${tool}: cols and rows must be given together to resize a PTY`);
    const { cols, rows } = a;
    if (typeof cols !== "number" || !Number.isInteger(cols) || cols < PTY_COLS.min || cols > PTY_COLS.max) {
      return fail(`${tool}: cols must be an integer from ${PTY_COLS.min} to ${PTY_COLS.max} (got ${JSON.stringify(cols)})`);
    }
    if (typeof rows !== "number" || !Number.isInteger(rows) || rows < PTY_ROWS.min || rows > PTY_ROWS.max) {
      return fail(`${tool}: rows must be an integer from ${PTY_ROWS.min} to ${PTY_ROWS.max} (got ${JSON.stringify(rows)})`);
    }
    resize = { cols, rows };
  }
  const endsStdin = endStdin.value === true;
  const bearsInput = input !== null || endsStdin || resize !== null;
  if (yieldUntil.value !== undefined) {
    if (yieldTimeMs.value !== undefined) return fail(`${tool}: yield_until and yield_time_ms are mutually exclusive`);
    if (bearsInput) {
      const with_ = [input !== null ? (chars.value !== undefined ? "chars" : "chars_b64") : null, endsStdin ? "end_stdin" : null, resize ? "cols/rows" : null];
      return fail(`${tool}: yield_until cannot be combined with input (${with_.filter(Boolean).join(", ")}); send the input first, then wait`);
    }
  }
  return {
    ok: true,
    value: {
      sessionId,
      input,
      endStdin: endsStdin,
      resize,
      yieldTimeMs: yieldTimeMs.value,
      yieldUntil: yieldUntil.value,
      waitKind: bearsInput ? "input" : "empty",
      raw: rawOutput.value ?? false,
    },
  };
}

export function validateListSessions(raw: unknown): Checked<Record<string, never>> {
  const object = checkObject("list_sessions", raw);
  if (!object.ok) return object;
  return { ok: true, value: {} };
}

export function validateSetOnExit(raw: unknown): Checked<SetOnExitRequest> {
  const tool = "set_on_exit";
  const call = sessionCall(tool, raw);
  if (!call.ok) return call;
  const onExit = onExitOf(tool, call.value.fields.on_exit, true);
  if (!onExit.ok) return onExit;
  return { ok: true, value: { sessionId: call.value.sessionId, onExit: onExit.value } };
}

const SIGNALS: readonly StopSignal[] = ["SIGTERM", "SIGKILL", "SIGINT", "SIGHUP", "SIGQUIT"];

export function validateKill(raw: unknown): Checked<KillRequest> {
  const tool = "kill_session";
  const call = sessionCall(tool, raw);
  if (!call.ok) return call;
  let signal: StopSignal = "SIGTERM";
  const rawSignal = call.value.fields.signal;
  if (rawSignal !== undefined) {
    const name = typeof rawSignal === "string" ? rawSignal.trim().toUpperCase() : "";
    const full = (name.startsWith("SIG") ? name : `SIG${name}`) as StopSignal;
    if (!SIGNALS.includes(full)) return fail(`${tool}: signal must be one of ${SIGNALS.join(", ")} (got ${JSON.stringify(rawSignal)})`);
    signal = full;
  }
  return { ok: true, value: { sessionId: call.value.sessionId, signal } };
}
