/**
 * A job's resource figures as the tools show them to the model: one compact line of text and the same figures as
 * structured fields, from the tree usage its actor last sampled (host/runtime/api.ts, `JobFigures.usage`). Pure, and
 * the one place that words them, so every result that lists a job (list_sessions, write_stdin, exec_command,
 * wait_jobs) says them alike.
 */
import { Type } from "typebox";
import type { WatchdogSpec } from "../../mailbox/spec.ts";
import type { TreeUsage } from "./api.ts";

/** The structured figures: bytes and a percentage of one core (null until two samples exist). */
export interface UsageFields {
  rss_bytes: number;
  cpu_percent: number | null;
  processes: number;
  peak_rss_bytes: number;
}

export const UsageFieldsSchema = Type.Object({
  rss_bytes: Type.Integer(),
  cpu_percent: Type.Union([Type.Number(), Type.Null()]),
  processes: Type.Integer(),
  peak_rss_bytes: Type.Integer(),
});

/**
 * The figures of a sampled tree; null before the first sample (or where the process table cannot read it), when a result leaves them out. A
 * tree never seen resident (sampled only while its process was being forked, or already a zombie) has no figures
 * yet either: zeros would be a reading, and a false one.
 */
export function usageFields(usage: TreeUsage | null): UsageFields | null {
  if (usage === null || usage.peakRssBytes === 0) return null;
  return {
    rss_bytes: usage.rssBytes,
    cpu_percent: usage.cpuPercent === null ? null : Math.round(usage.cpuPercent * 10) / 10,
    processes: usage.processes,
    peak_rss_bytes: usage.peakRssBytes,
  };
}

const MIB = 1024 * 1024;

/** `12.3MiB` under a GiB (a tenth of a MiB tells a small job's growth), then `5.10GiB`. */
function size(bytes: number): string {
  return bytes < 1024 * MIB ? `${(bytes / MIB).toFixed(1)}MiB` : `${(bytes / (1024 * MIB)).toFixed(2)}GiB`;
}

/** `usage: rss=231.0MiB cpu=95% processes=3 peak_rss=240.2MiB` (CPU over the last sample interval, of one core). */
export function usageLine(fields: UsageFields): string {
  const cpu = fields.cpu_percent === null ? "unknown" : `${Math.round(fields.cpu_percent)}%`;
  return `usage: rss=${size(fields.rss_bytes)} cpu=${cpu} processes=${fields.processes} peak_rss=${size(fields.peak_rss_bytes)}`;
}

/**
 * What a watchdog wake says of a runaway: `5.10GiB and 190% CPU (watchdog: over 4.00GiB, or over 100% CPU for
 * 10 min)`. `reason` is the actor's (actors/watch/usage-judge.ts): what the tree passed.
 */
export function runawayFigures(fields: UsageFields | null, watchdog: WatchdogSpec, reason: string | null): string {
  const thresholds = `watchdog: over ${size(watchdog.memoryBytes)}, or over ${Math.round(watchdog.cpuPercent)}% CPU for ${Math.round(watchdog.sustainMs / 60_000)} min`;
  if (fields === null) return `more than the watchdog allows (${thresholds})`;
  const cpu = fields.cpu_percent === null ? "" : ` and ${Math.round(fields.cpu_percent)}% CPU`;
  return `${size(fields.rss_bytes)}${cpu} (${reason === null ? "" : `passed: ${reason}; `}${thresholds})`;
}
