/**
 * Checks exec_command's `ready`, `stall_seconds` and `on_stall` and turns them into the watches the actor keeps.
 * Pure apart from compiling the pattern once (to reject one that cannot compile); every error names its field.
 */
import { Type } from "typebox";
import { validatePattern } from "../../shared/linear-regex.ts";
import type { ReadySpec } from "../../mailbox/spec.ts";
import { fail, type Checked } from "./checked.ts";

/** The ready deadline when none is given. */
export const DEFAULT_READY_TIMEOUT_MS = 60_000;
/** Longest stall time accepted (a day). */
const MAX_STALL_SECONDS = 86_400;

/** exec_command's `ready`, as declared to the model. */
export const Ready = Type.Object(
  {
    pattern: Type.Optional(Type.String({ description: "Output regex" })),
    port: Type.Optional(Type.Integer()),
    http: Type.Optional(Type.String({ description: "URL or path on port; GET<500" })),
    timeout_ms: Type.Optional(Type.Number()),
  },
  { additionalProperties: false, description: "Servers: return once all hold; job keeps running" },
);

/**
 * `ready` as given to the tool: { pattern?, port?, http?, timeout_ms? }, at least one condition. `http` is a URL, or a
 * path ("/health") on `port`. `timeout_ms` is at most the job's lifetime.
 */
export function readyOf(tool: string, raw: unknown, lifetimeMs: number): Checked<ReadySpec | null> {
  if (raw === undefined || raw === null) return { ok: true, value: null };
  if (typeof raw !== "object" || Array.isArray(raw)) return fail(`${tool}: ready must be an object with pattern, port, http and/or timeout_ms`);
  const a = raw as Record<string, unknown>;
  const unknown = Object.keys(a).filter((key) => !["pattern", "port", "http", "timeout_ms"].includes(key) && a[key] !== undefined);
  if (unknown.length > 0) return fail(`${tool}: unknown field ready.${unknown.join(", ready.")} (accepted: pattern, port, http, timeout_ms)`);
  const given = (key: string) => a[key] !== undefined && a[key] !== null;

  let pattern: string | null = null;
  if (given("pattern")) {
    if (typeof a.pattern !== "string" || a.pattern.length === 0) return fail(`${tool}: ready.pattern must be a non-empty regex string`);
    const valid = validatePattern(a.pattern);
    if (!valid.ok) return fail(`${tool}: ready.pattern does not compile: ${valid.error}`);
    pattern = a.pattern;
  }
  let port: number | null = null;
  if (given("port")) {
    if (typeof a.port !== "number" || !Number.isInteger(a.port) || a.port < 1 || a.port > 65_535) {
      return fail(`${tool}: ready.port must be a TCP port number from 1 to 65535 (got ${JSON.stringify(a.port)})`);
    }
    port = a.port;
  }
  let http: string | null = null;
  if (given("http")) {
    if (typeof a.http !== "string" || a.http.trim() === "") return fail(`${tool}: ready.http must be a URL or a path on ready.port`);
    if (a.http.startsWith("/")) {
      if (port === null) return fail(`${tool}: ready.http "${a.http}" is a path, which needs ready.port (or give a full http:// URL)`);
      http = `http://127.0.0.1:${port}${a.http}`;
    } else {
      let url: URL;
      try {
        url = new URL(a.http);
      } catch {
        return fail(`${tool}: ready.http must be an http:// or https:// URL, or a path on ready.port (got ${JSON.stringify(a.http)})`);
      }
      if (url.protocol !== "http:" && url.protocol !== "https:") return fail(`${tool}: ready.http must use http or https (got ${url.protocol})`);
      http = url.href;
    }
  }
  if (pattern === null && port === null && http === null) return fail(`${tool}: ready needs at least one of ready.pattern, ready.port, ready.http`);
  let timeoutMs = Math.min(DEFAULT_READY_TIMEOUT_MS, lifetimeMs);
  if (given("timeout_ms")) {
    const t = a.timeout_ms;
    if (typeof t !== "number" || !Number.isFinite(t) || t <= 0) return fail(`${tool}: ready.timeout_ms must be a positive number of milliseconds`);
    if (t > lifetimeMs) return fail(`${tool}: ready.timeout_ms (${t}) is longer than the job's lifetime (timeout_seconds: ${lifetimeMs / 1000})`);
    timeoutMs = Math.max(1, Math.round(t));
  }
  return { ok: true, value: { pattern, port, http, timeoutMs } };
}

/** `stall_seconds`: off when absent. */
export function stallOf(tool: string, raw: unknown): Checked<number | null> {
  if (raw === undefined || raw === null) return { ok: true, value: null };
  if (typeof raw !== "number" || !Number.isFinite(raw) || raw <= 0 || raw > MAX_STALL_SECONDS) {
    return fail(`${tool}: stall_seconds must be a positive number of seconds, at most ${MAX_STALL_SECONDS} (got ${JSON.stringify(raw)})`);
  }
  return { ok: true, value: Math.max(1, Math.round(raw * 1000)) };
}
