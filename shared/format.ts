/**
 * Short human figures, one function per unit, for everything pi-jobs draws: the shell rows, the /monitor console, the
 * pickers, the monitor reports, the metrics footer and /metrics. Unknown values are "—", never an invented zero.
 *
 * Where two views show one unit differently on purpose, the unit's function takes the view's style: the console's
 * `1.0 KiB` and a job's `8.4s` against the metrics footer's tighter `1.0KiB` and a latency's `8.40s`.
 */
export const UNKNOWN = "—";

/**
 * `job`: how long a job has run or been quiet, `33ms`, `8.4s`, `2m05s`, `1h02m03s`. `latency`: a model's or the event
 * loop's delay, a hundredth of a second finer below ten seconds, `33ms`, `8.40s`, `12.3s`, `2m5s`.
 */
export type ElapsedStyle = "job" | "latency";

export function elapsed(ms: number | null, style: ElapsedStyle = "job"): string {
  if (ms === null || !Number.isFinite(ms)) return UNKNOWN;
  return style === "job" ? jobElapsed(ms) : latency(ms);
}

function jobElapsed(ms: number): string {
  const total = Math.max(0, Math.round(ms));
  if (total < 1000) return `${total}ms`;
  const tenths = Math.round(total / 100);
  if (tenths < 600) return `${(tenths / 10).toFixed(1)}s`;
  const seconds = Math.round(total / 1000);
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = String(seconds % 60).padStart(2, "0");
  return h > 0 ? `${h}h${String(m).padStart(2, "0")}m${s}s` : `${m}m${s}s`;
}

function latency(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)}s`;
  const m = Math.floor(ms / 60_000);
  return `${m}m${Math.round((ms % 60_000) / 1000)}s`;
}

/** `10m`, `90s`, `1h30m`: a duration someone set (a timeout), exact, as it would be written. */
export function duration(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/**
 * `spaced`: `512 B`, `1.0 KiB`, `3.5 MiB`, `1.25 GiB` (the console, the shell rows). `tight`: `512B`, `1.0KiB`,
 * `3.5MiB`, with no GiB step (the metrics footer and /metrics, where a job rate sits among other figures in a line).
 */
export type ByteStyle = "spaced" | "tight";

export function bytes(n: number | null, style: ByteStyle = "spaced"): string {
  if (n === null || !Number.isFinite(n)) return UNKNOWN;
  const gap = style === "spaced" ? " " : "";
  if (n < 1024) return `${Math.round(n)}${gap}B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)}${gap}KiB`;
  if (style === "tight" || n < 1024 * 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1)}${gap}MiB`;
  return `${(n / (1024 * 1024 * 1024)).toFixed(2)}${gap}GiB`;
}

/**
 * A rate per second, a tenth below the point where it is shown whole: `lines` from 100 (the console's lines/s),
 * `tokens` from 1000 (tok/s, whose tenth still tells two models apart in the hundreds).
 */
export type RateStyle = "lines" | "tokens";

export function rate(n: number | null, style: RateStyle = "lines"): string {
  if (n === null || !Number.isFinite(n)) return UNKNOWN;
  return n >= (style === "lines" ? 100 : 1000) ? `${Math.round(n)}` : n.toFixed(1);
}

/** `950`, `1.2k`, `48k`, `1.5M`: token counts and rates of lines in a dense line. */
export function count(n: number | null): string {
  if (n === null || !Number.isFinite(n)) return UNKNOWN;
  const a = Math.abs(n);
  if (a < 1000) return `${Math.round(n)}`;
  if (a < 1_000_000) return `${(n / 1000).toFixed(a < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** `$0.042`, `$1.25`: a cost in dollars, a tenth of a cent finer below a dollar. */
export function cost(c: number | null): string {
  if (c === null || !Number.isFinite(c)) return UNKNOWN;
  return c < 1 ? `$${c.toFixed(3)}` : `$${c.toFixed(2)}`;
}

/**
 * `7.5%`, `42%`. `digits`: `auto` keeps a tenth below 10 % (the console's CPU), 0 or 1 fixes it (the context use).
 * `unknown` is what an unknown value shows: the footer's context use says `?`, as its token counts beside it do.
 */
export function percent(n: number | null, digits: "auto" | 0 | 1 = "auto", unknown = UNKNOWN): string {
  if (n === null || !Number.isFinite(n)) return unknown;
  return `${n.toFixed(digits === "auto" ? (n >= 10 ? 0 : 1) : digits)}%`;
}
