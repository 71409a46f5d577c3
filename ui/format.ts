/** Short human figures for rows and details. Unknown values are "—", never an invented zero. */
export const UNKNOWN = "—";

/** `33ms`, `8.4s`, `2m05s`, `1h02m03s`. */
export function elapsed(ms: number): string {
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

export function bytes(n: number | null): string {
  if (n === null || !Number.isFinite(n)) return UNKNOWN;
  if (n < 1024) return `${Math.round(n)} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 * 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
  return `${(n / (1024 * 1024 * 1024)).toFixed(2)} GiB`;
}

export function rate(n: number | null): string {
  if (n === null || !Number.isFinite(n)) return UNKNOWN;
  return n >= 100 ? `${Math.round(n)}` : n.toFixed(1);
}

export function percent(n: number | null): string {
  if (n === null || !Number.isFinite(n)) return UNKNOWN;
  return `${n.toFixed(n >= 10 ? 0 : 1)}%`;
}

/** `10m`, `90s`, `1h30m`: a duration setting (timeouts). */
export function duration(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}
