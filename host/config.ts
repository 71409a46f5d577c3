/**
 * Every environment switch pi-jobs reads, in one place, each named PI_JOBS_* (README.md, "Settings", documents them).
 * A switch is read where it is used, not when this module loads: a value changed in a running Pi applies to the next
 * job or call, and an invalid value fails only the call that would use it, with a message that names the variable the
 * user set. Older names stay readable as aliases; the current name wins when both are set (shared/config.ts).
 */
import { totalmem } from "node:os";
import type { WatchdogSpec } from "../mailbox/spec.ts";
import { readSwitch, PROCESS_TABLE_SWITCH, WORKERS_SWITCH, type Env, type SwitchNames } from "../shared/config.ts";

/** Each switch's name, then its aliases. */
export const SWITCHES = {
  spawner: ["PI_JOBS_SPAWNER"],
  redact: ["PI_JOBS_REDACT"],
  crashCleanup: ["PI_JOBS_CRASH_CLEANUP"],
  checkMessages: ["PI_JOBS_CHECK_MESSAGES"],
  maxEmptyPoll: ["PI_JOBS_MAX_EMPTY_POLL_MS", "PI_SHELL_JOBS_MAX_EMPTY_POLL_MS"],
  steerInterrupt: ["PI_JOBS_STEER_INTERRUPT", "PI_SHELL_JOBS_STEER_INTERRUPT"],
  workers: WORKERS_SWITCH,
  demo: ["PI_JOBS_DEMO"],
  watchdog: ["PI_JOBS_WATCHDOG"],
  processTable: PROCESS_TABLE_SWITCH,
} as const satisfies Record<string, SwitchNames>;

const isOff = (env: Env, names: SwitchNames): boolean => readSwitch(env, names)?.raw === "0";

/** `PI_JOBS_SPAWNER=0`: each job's actor forks its process itself instead of the session's spawner. */
export function spawnerEnabled(env: Env): boolean {
  return !isOff(env, SWITCHES.spawner);
}

/** `PI_JOBS_REDACT=0` turns redaction off, for a user who needs raw values in front of the model. */
export function redactionEnabled(env: Env): boolean {
  return !isOff(env, SWITCHES.redact);
}

/** `PI_JOBS_CRASH_CLEANUP=0` turns off the cleanup after a session that ended without shutdown. */
export function crashCleanupEnabled(env: Env): boolean {
  return !isOff(env, SWITCHES.crashCleanup);
}

/** `PI_JOBS_CHECK_MESSAGES=1|0` forces the mailbox's schema checks on or off; null leaves the choice to the runtime. */
export function checkMessagesForced(env: Env): boolean | null {
  const raw = readSwitch(env, SWITCHES.checkMessages)?.raw;
  return raw === "1" ? true : raw === "0" ? false : null;
}

/**
 * Empty polls of a shell job that are not explicit immediate reads wait at least this long (and this long when
 * omitted); the operator's cap on them is never below it.
 */
export const MIN_EMPTY_POLL_MS = 5_000;

export type EmptyPollCap = { ok: true; capMs: number | null } | { ok: false; error: string };

/** The operator's cap on relative empty polls: unset means none; values below the 5 s floor are raised to it. */
export function readEmptyPollCap(env: Env): EmptyPollCap {
  const set = readSwitch(env, SWITCHES.maxEmptyPoll);
  if (set === null || set.raw.trim() === "") return { ok: true, capMs: null };
  const text = set.raw.trim();
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value <= 0) {
    return { ok: false, error: `${set.variable}=${JSON.stringify(set.raw)} is not a positive whole number of milliseconds` };
  }
  return { ok: true, capMs: Math.max(value, MIN_EMPTY_POLL_MS) };
}

/** Human steering ends a shell wait early unless the operator set `PI_JOBS_STEER_INTERRUPT=0`. */
export function steerInterruptEnabled(env: Env): boolean {
  const raw = readSwitch(env, SWITCHES.steerInterrupt)?.raw;
  return raw === undefined || raw.trim() !== "0";
}

/** `PI_JOBS_DEMO=1|0` forces `npm start`'s offline demo model on or off; null lets the credentials decide. */
export function demoForced(env: Env): boolean | null {
  const raw = readSwitch(env, SWITCHES.demo)?.raw;
  return raw === "1" ? true : raw === "0" ? false : null;
}

/**
 * The watchdog's default thresholds, the one place they are set (README.md, "Resource limits and the watchdog"): a
 * job's tree is a runaway above a quarter of the machine's memory or 4 GiB, whichever is less, or above one core
 * busy on average over ten minutes.
 */
export const WATCHDOG_DEFAULTS = {
  memoryShare: 0.25,
  memoryCapBytes: 4 * 1024 ** 3,
  cpuPercent: 100,
  sustainMinutes: 10,
} as const;

export type WatchdogSetting = { ok: true; spec: WatchdogSpec | null } | { ok: false; error: string };

const WATCHDOG_KEYS = ["memory_mb", "cpu_percent", "cpu_minutes"] as const;

/**
 * `PI_JOBS_WATCHDOG`: unset or `1` the defaults, `0` off, or `memory_mb=N,cpu_percent=N,cpu_minutes=N` (any of them;
 * the rest keep their defaults) to move the thresholds. `memoryBytes` is the machine's share unless given.
 */
export function readWatchdog(env: Env, machineBytes: number = totalmem()): WatchdogSetting {
  const set = readSwitch(env, SWITCHES.watchdog);
  const raw = set?.raw.trim() ?? "";
  if (raw === "0") return { ok: true, spec: null };
  const spec: WatchdogSpec = {
    memoryBytes: Math.round(Math.min(machineBytes * WATCHDOG_DEFAULTS.memoryShare, WATCHDOG_DEFAULTS.memoryCapBytes)),
    cpuPercent: WATCHDOG_DEFAULTS.cpuPercent,
    sustainMs: WATCHDOG_DEFAULTS.sustainMinutes * 60_000,
  };
  if (set === null || raw === "" || raw === "1") return { ok: true, spec };
  for (const part of raw.split(",")) {
    const [key, text, ...rest] = part.split("=").map((piece) => piece.trim());
    const value = text === undefined || rest.length > 0 || !/^\d+(\.\d+)?$/.test(text) ? Number.NaN : Number(text);
    if (!(WATCHDOG_KEYS as readonly (string | undefined)[]).includes(key) || !(value > 0)) {
      return {
        ok: false,
        error: `${set.variable}=${JSON.stringify(set.raw)}: expected 0, 1, or ${WATCHDOG_KEYS.map((k) => `${k}=N`).join(",")} with positive numbers (at ${JSON.stringify(part)})`,
      };
    }
    if (key === "memory_mb") spec.memoryBytes = Math.max(1, Math.round(value * 1024 * 1024));
    else if (key === "cpu_percent") spec.cpuPercent = value;
    else spec.sustainMs = Math.max(1, Math.round(value * 60_000));
  }
  return { ok: true, spec };
}
