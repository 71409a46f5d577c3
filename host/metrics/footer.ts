/**
 * The metrics footer layout: at most three rows expanded, one collapsed. Groups are placed by priority
 * and shown in reading order; groups that do not fit are dropped and counted as "… +N", long values are
 * ellipsized and a long directory keeps its end. Pure: a style object stands in for Pi's theme, and all
 * widths are terminal columns.
 */
import { truncateToWidth, visibleWidth } from "@earendil-works/pi-tui";
import type { FooterModel } from "./views.ts";
import { safe } from "../../shared/sanitize.ts";
import { bytes, cost, count, elapsed, percent, rate, UNKNOWN } from "../../shared/format.ts";
import { effQualifierText } from "./live-view.ts";
import { isWarningStatus } from "./statuses.ts";

/**
 * The footer's free-text fields come from the outside world (a directory name, a git branch, a session name, a
 * model id): no control sequence in them may reach the terminal, and each must measure what it displays.
 */
function withSafeText(m: FooterModel): FooterModel {
  const optional = (text: string | null) => (text === null ? null : safe(text));
  return {
    ...m,
    cwd: safe(m.cwd),
    gitBranch: optional(m.gitBranch),
    sessionName: optional(m.sessionName),
    model: optional(m.model),
    thinkingLevel: optional(m.thinkingLevel),
  };
}

export interface FooterStyle {
  accent(s: string): string;
  bold(s: string): string;
  dim(s: string): string;
  muted(s: string): string;
  warning(s: string): string;
  error(s: string): string;
}

export const PLAIN_STYLE: FooterStyle = { accent: (s) => s, bold: (s) => s, dim: (s) => s, muted: (s) => s, warning: (s) => s, error: (s) => s };

export interface FooterLayout {
  lines: string[];
  /** Columns [start, end) of the collapse/expand button on row 0, or null when it did not fit. */
  button: { start: number; end: number } | null;
  omitted: number;
}

interface Group {
  /** Lower is more important. */
  priority: number;
  text: string;
  /** Allowed to shrink to this many columns with an ellipsis (0 = never shrink). */
  minWidth?: number;
  /** Keep the end of the text when shrinking (directories): the unstyled text and its styling. */
  keepEnd?: { plain: string; paint: (s: string) => string };
}

const GAP = "  ";

function shrink(g: Group, width: number): string {
  if (visibleWidth(g.text) <= width) return g.text;
  if (g.keepEnd) {
    // Cut the unstyled text from the front, then style it: slicing styled text would split escapes.
    const chars = [...g.keepEnd.plain];
    let out = "";
    for (let i = chars.length - 1; i >= 0; i--) {
      const next = (chars[i] as string) + out;
      if (visibleWidth(`…${next}`) > width) break;
      out = next;
    }
    return g.keepEnd.paint(`…${out}`);
  }
  return truncateToWidth(g.text, width, "…");
}

/** Fits groups into one row; returns the row text and how many groups were dropped. */
function fitRow(groups: Group[], width: number, reserveRight: number, countOmitted: boolean): { text: string; omitted: number } {
  const avail = Math.max(0, width - reserveRight);
  const order = groups.map((g, i) => ({ g, i })).sort((a, b) => a.g.priority - b.g.priority || a.i - b.i);
  const chosen = new Map<number, string>();
  let used = 0;
  const suffixWidth = (n: number): number => (countOmitted && n > 0 ? visibleWidth(`${GAP}… +${n}`) : 0);
  let dropped = 0;
  for (let k = 0; k < order.length; k++) {
    const { g, i } = order[k] as { g: Group; i: number };
    const remainingAfter = order.length - k - 1;
    const gap = chosen.size > 0 ? GAP.length : 0;
    const w = visibleWidth(g.text);
    // Worst case, every later group is dropped too: keep room for the "… +N" marker, so a less important
    // group can never take the space that marker needs for the groups already dropped.
    const room = avail - used - gap - suffixWidth(dropped + remainingAfter);
    if (w <= room) {
      chosen.set(i, g.text);
      used += gap + w;
    } else if (g.minWidth !== undefined && room >= g.minWidth) {
      const t = shrink(g, room);
      chosen.set(i, t);
      used += gap + visibleWidth(t);
    } else dropped++;
  }
  const parts = [...chosen.entries()].sort((a, b) => a[0] - b[0]).map(([, t]) => t);
  const omitted = groups.length - chosen.size;
  let text = parts.join(GAP);
  if (countOmitted && omitted > 0) text += `${text.length > 0 ? GAP : ""}… +${omitted}`;
  return { text: truncateToWidth(text, avail, "…"), omitted };
}

function effGroup(m: FooterModel, s: FooterStyle, short: boolean): string {
  const q = effQualifierText(m.effQualifier);
  const value = m.effTps === null ? UNKNOWN : `${rate(m.effTps, "tokens")}${short ? "" : " tok/s"}`;
  const label = short ? "TPS" : "↯ EFF TPS";
  return `${s.muted(label)} ${s.bold(value)}${q ? s.dim(` · ${q}`) : ""}`;
}

function ttftGroup(m: FooterModel, s: FooterStyle, short: boolean): string {
  const waiting = m.activity === "running" && m.ttftMs === null;
  const v = waiting ? "…" : elapsed(m.ttftMs, "latency");
  const label = m.responseLabel === null ? "" : ` ${s.warning(m.responseLabel)}`;
  return `${s.muted(short ? "TTFT" : "◷ TTFT")} ${s.bold(v)}${short ? "" : s.dim(" obs")}${label}`;
}

function ctxGroup(m: FooterModel, s: FooterStyle, short: boolean): { text: string; high: boolean } {
  const p = m.contextPercent;
  const paint = p !== null && p >= 90 ? s.error : p !== null && p >= 70 ? s.warning : s.bold;
  if (short) return { text: `${s.muted("◫ CTX")} ${paint(percent(p, 0, "?"))}`, high: p !== null && p >= 70 };
  const cells = 6;
  const filled = p === null ? 0 : Math.min(cells, Math.round((p / 100) * cells));
  const bar = "━".repeat(filled) + "╌".repeat(cells - filled);
  const amount = m.contextWindow ? ` · ${m.contextTokens === null ? "?" : count(m.contextTokens)}/${count(m.contextWindow)}` : "";
  return { text: `${s.muted("◫ CTX")} ${paint(bar)} ${paint(percent(p, 1, "?"))}${s.dim(amount)}`, high: p !== null && p >= 70 };
}

function agentGroup(m: FooterModel, s: FooterStyle): string | null {
  const a = m.agent;
  if (a === null) return null;
  const state = a.state === "running" ? "" : ` · ${a.state}`;
  const active = a.active > 0 ? ` · Agents: ${a.active} active requests` : "";
  return `${s.muted(`AGENT ${a.label}`)} ${s.bold(elapsed(a.ttftMs, "latency"))} ${s.bold(rate(a.effTps, "tokens"))}${s.dim(` tok/s${state}${active}`)}`;
}

function jobsGroup(m: FooterModel, s: FooterStyle): string | null {
  const j = m.jobs;
  if (j === null || j.running <= 0) return null;
  const eld = j.eventLoopDelayP99Ms === null ? "" : ` · ELD ${elapsed(j.eventLoopDelayP99Ms, "latency")}`;
  return `${s.muted("⚙ JOBS")} ${s.bold(String(j.running))}${s.dim(` · ${count(j.linesPerSecond)} l/s · ${bytes(j.bytesPerSecond, "tight")}/s${eld}`)}`;
}

function statusGroups(m: FooterModel, s: FooterStyle, base: number): Group[] {
  const out: Group[] = [];
  for (const w of m.warnings) out.push({ priority: base - 10, text: s.warning(w), minWidth: 12 });
  for (const st of m.statuses) {
    const warn = isWarningStatus(st.text);
    out.push({ priority: warn ? base - 5 : base + 5, text: warn ? s.warning(st.text) : s.dim(st.text), minWidth: 10 });
  }
  return out;
}

function headerGroups(m: FooterModel, s: FooterStyle): Group[] {
  const paint = (t: string): string => s.bold(s.accent(t));
  const g: Group[] = [{ priority: 1, text: paint(m.cwd), minWidth: 8, keepEnd: { plain: m.cwd, paint } }];
  if (m.gitBranch) g.push({ priority: 6, text: s.dim(`⎇ ${m.gitBranch}`), minWidth: 8 });
  if (m.sessionName) g.push({ priority: 8, text: s.dim(m.sessionName), minWidth: 8 });
  if (m.model) g.push({ priority: 7, text: s.dim(`${m.model}${m.thinkingLevel ? ` · ${m.thinkingLevel}` : ""}`), minWidth: 10 });
  return g;
}

export function renderFooter(model: FooterModel, width: number, s: FooterStyle = PLAIN_STYLE): FooterLayout {
  if (width <= 0) return { lines: [], button: null, omitted: 0 };
  const m = withSafeText(model);
  const buttonText = m.collapsed ? (width >= 60 ? "[▸ Expand]" : "[▸]") : width >= 60 ? "[▾ Collapse]" : "[▾]";
  const bw = visibleWidth(buttonText);
  const withButton = (row: { text: string }, reserve: number): { line: string; button: FooterLayout["button"] } => {
    if (reserve === 0) return { line: row.text, button: null };
    const pad = Math.max(1, width - visibleWidth(row.text) - bw);
    const start = visibleWidth(row.text) + pad;
    return { line: truncateToWidth(row.text + " ".repeat(pad) + s.accent(buttonText), width), button: { start, end: start + bw } };
  };
  const reserve = width >= bw + 10 ? bw + 1 : 0;

  if (m.collapsed) {
    const ctx = ctxGroup(m, s, true);
    const groups: Group[] = [
      { priority: 0, text: ttftGroup(m, s, true) },
      { priority: 0, text: effGroup(m, s, true), minWidth: 8 },
      { priority: ctx.high ? 1 : 4, text: ctx.text },
    ];
    const agent = agentGroup(m, s);
    if (agent) groups.push({ priority: 2, text: agent, minWidth: 12 });
    const jobs = jobsGroup(m, s);
    if (jobs) groups.push({ priority: 3, text: jobs, minWidth: 10 });
    if (m.model) groups.push({ priority: 5, text: s.dim(`${m.model}${m.thinkingLevel ? ` · ${m.thinkingLevel}` : ""}`), minWidth: 10 });
    groups.push(...statusGroups(m, s, 6));
    const row = fitRow(groups, width, reserve, true);
    const b = withButton(row, reserve);
    return { lines: [b.line], button: b.button, omitted: row.omitted };
  }

  const header = fitRow(headerGroups(m, s), width, reserve, false);
  const h = withButton(header, reserve);

  const perf: Group[] = [
    { priority: 0, text: ttftGroup(m, s, false) },
    { priority: 0, text: effGroup(m, s, false), minWidth: 10 },
  ];
  if (m.obsTps !== null && m.obsTps > 0) perf.push({ priority: 1, text: `${s.muted("⋯ OBS TPS")} ${s.bold(`≈${rate(m.obsTps, "tokens")}`)}${s.dim(" tok/s")}` });
  const agent = agentGroup(m, s);
  if (agent) perf.push({ priority: 2, text: agent, minWidth: 12 });
  const jobs = jobsGroup(m, s);
  if (jobs) perf.push({ priority: 2, text: jobs, minWidth: 10 });
  perf.push({ priority: 3, text: `${s.muted("↗ IN")} ${s.bold(count(m.inputTokens))} ${s.muted("↙ OUT")} ${s.bold(count(m.outputTokens))}` });
  const p = fitRow(perf, width, 0, true);

  const ctx = ctxGroup(m, s, false);
  const hit = percent(m.cacheHit === null ? null : m.cacheHit * 100, 0);
  const third: Group[] = [
    { priority: ctx.high ? 0 : 2, text: ctx.text, minWidth: 10 },
    { priority: 3, text: `${s.muted("◇ COST")} ${s.bold(cost(m.cost))}` },
    { priority: 4, text: `${s.muted("◈ CACHE")} ${s.dim("R")} ${s.bold(count(m.cacheRead))} ${s.dim("· W")} ${s.bold(count(m.cacheWrite))} ${s.dim("· HIT")} ${s.bold(hit)}` },
    ...statusGroups(m, s, 3),
  ];
  const t = fitRow(third, width, 0, true);
  return { lines: [h.line, p.text, t.text].map((l) => truncateToWidth(l, width)), button: h.button, omitted: header.omitted + p.omitted + t.omitted };
}
