/**
 * What `ps` and `lsof` print, parsed (pure). The columns are asked for with keywords both BSD `ps` (macOS) and procps
 * (Linux) accept; where the two print a column differently the parser takes both forms
 * (docs/decisions/process-table.md).
 */
import { TAG_VARIABLE } from "./tags.ts";

/** The columns of every `ps` call, all with empty headers (`=`); `args` last, since it holds spaces. */
export const PS_COLUMNS = "pid=,ppid=,pgid=,stat=,rss=,time=,lstart=,args=";

/** One process as `ps` printed it. */
export interface PsRow {
  pid: number;
  ppid: number;
  pgid: number;
  /** The state letter (the first of `stat`): `Z` for a zombie on both. */
  state: string;
  /** Resident memory: `rss` is in KiB on both. */
  rssBytes: number;
  /** Own CPU time (user and system), ms: whole seconds from procps, hundredths from BSD. */
  cpuMs: number;
  /** The step of `cpuMs`: 10 where `time` printed hundredths (BSD), 1000 where whole seconds (procps). */
  cpuStepMs: number;
  /** Epoch seconds of the start (`lstart`, whole seconds on both). */
  startedAt: number;
  /** The value of its job tag, from the environment `ps` shows after the command; null when it has none. */
  tag: string | null;
}

/**
 * CPU time as `time` prints it: procps `[DD-]HH:MM:SS`, BSD `MMM:SS.ss` (minutes, seconds with hundredths). The
 * colon-separated parts are read from the right in base 60, so both forms parse.
 */
export function parseCpuTime(text: string): number | null {
  const dash = text.indexOf("-");
  const days = dash < 0 ? 0 : Number(text.slice(0, dash));
  const parts = text.slice(dash + 1).split(":");
  let seconds = 0;
  for (const part of parts) {
    if (!/^\d+(\.\d+)?$/.test(part)) return null;
    seconds = seconds * 60 + Number(part);
  }
  return Number.isFinite(days) && parts.length <= 3 ? Math.round((days * 86_400 + seconds) * 1000) : null;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** `lstart` in the C locale, `Mon Dec  7 05:05:57 2026` (local time), as epoch seconds; its five words. */
export function parseStart(words: readonly string[]): number | null {
  const [, month, day, time, year] = words;
  const monthIndex = MONTHS.indexOf(month ?? "");
  const clock = /^(\d\d):(\d\d):(\d\d)$/.exec(time ?? "");
  if (monthIndex < 0 || clock === null) return null;
  const date = new Date(Number(year), monthIndex, Number(day), Number(clock[1]), Number(clock[2]), Number(clock[3]));
  const ms = date.getTime();
  return Number.isFinite(ms) ? ms / 1000 : null;
}

const TAG_ENTRY = ` ${TAG_VARIABLE}=`;

/**
 * The job tag in what follows the command: `ps` prints the environment after the arguments, entries separated by
 * spaces, so the last ` PI_JOBS_JOB=` is the environment's (an argument that looks like one comes before it). A tag
 * holds no space (`<runtime>/<job>`).
 */
export function tagInArgs(args: string): string | null {
  const at = args.lastIndexOf(TAG_ENTRY);
  if (at < 0) return null;
  const start = at + TAG_ENTRY.length;
  const end = args.indexOf(" ", start);
  const tag = args.slice(start, end < 0 ? args.length : end);
  return tag === "" ? null : tag;
}

/** One line of `ps -o PS_COLUMNS`; null for a line that is not one (a header, an empty line). */
export function parsePsLine(line: string): PsRow | null {
  // pid ppid pgid stat rss time, then lstart's five words, then the command and its environment.
  const words = line.trim().split(/\s+/, 11);
  if (words.length < 11) return null;
  const numbers = words.slice(0, 3).map(Number);
  const state = words[3]!.charAt(0);
  const rssKib = Number(words[4]);
  const cpuMs = parseCpuTime(words[5]!);
  const startedAt = parseStart(words.slice(6, 11));
  if (!numbers.every(Number.isSafeInteger) || state === "" || !Number.isFinite(rssKib) || cpuMs === null || startedAt === null) return null;
  return {
    pid: numbers[0]!,
    ppid: numbers[1]!,
    pgid: numbers[2]!,
    state,
    rssBytes: rssKib * 1024,
    cpuMs,
    cpuStepMs: words[5]!.includes(".") ? 10 : 1000,
    startedAt,
    tag: tagInArgs(line),
  };
}

/** Every row of a `ps` output. */
export function parsePs(output: string): PsRow[] {
  const rows: PsRow[] = [];
  for (const line of output.split("\n")) {
    const row = parsePsLine(line);
    if (row !== null) rows.push(row);
  }
  return rows;
}

/**
 * The ports in `lsof -F pn` output: a `p<pid>` line opens each process, an `n<address>:<port>` line names each of its
 * listening sockets (`*:8080`, `127.0.0.1:8080`, `[::1]:8080`). Sorted and distinct.
 */
export function parseLsofPorts(output: string): number[] {
  const ports = new Set<number>();
  for (const line of output.split("\n")) {
    if (!line.startsWith("n")) continue;
    const port = Number(line.slice(line.lastIndexOf(":") + 1));
    if (Number.isInteger(port) && port > 0) ports.add(port);
  }
  return [...ports].sort((a, b) => a - b);
}
