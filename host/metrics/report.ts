/**
 * Text of `/metrics` (summary) and `/metrics details` (every value and status). Pure: the host gathers
 * the numbers, this file only lays them out. Native totals, Translator receipts and agent observations
 * are separate sections and are never added together.
 */
import type { AgentSummary, AgentView } from "./agent-store.ts";
import type { DelegationRecord } from "./delegation.ts";
import type { History } from "./history.ts";
import type { ReceiptGroup, ReceiptSubtotal, ReceiptSummary } from "./receipts.ts";
import { effQualifierText, type LiveView } from "./live-view.ts";
import type { FooterModel, JobRates } from "./views.ts";
import type { Aggregate } from "./throughput.ts";
import type { NativeTotals } from "./usage.ts";
import { bytes, cost, count, elapsed, percent, rate, UNKNOWN } from "../../shared/format.ts";

export interface JobSection {
  latest: JobRates | null;
  samples: number;
  peakRunning: number;
  peakLinesPerSecond: number;
  peakBytesPerSecond: number;
  peakEventLoopDelayP99Ms: number | null;
}

export interface MetricsReport {
  means: {
    activityTtft: { mean: number | null; count: number };
    activityElapsed: { mean: number | null; count: number };
    requestTtft: { mean: number | null; count: number };
    requestResponse: { mean: number | null; count: number };
  };
  throughput: Aggregate;
  history: History;
  live: LiveView;
  native: NativeTotals;
  receipts: ReceiptSummary;
  agents: AgentView[];
  agentSummaries: AgentSummary[];
  agentRejections: ReadonlyMap<string, number>;
  delegations: DelegationRecord[];
  jobs: JobSection;
}

function mean(label: string, m: { mean: number | null; count: number }): string {
  return `  ${label}: ${elapsed(m.mean, "latency")} (n=${m.count})`;
}

/** The mean timings, the same four lines in the summary and in the details. */
function means(rep: MetricsReport): string[] {
  return [
    mean("activity TTFT (observed)", rep.means.activityTtft),
    mean("activity duration", rep.means.activityElapsed),
    mean("request TTFT (observed)", rep.means.requestTtft),
    mean("request response", rep.means.requestResponse),
  ];
}

function subtotal(t: ReceiptSubtotal): string {
  const n = (v: number | null): string => (v === null ? "unavailable" : count(v));
  return `in ${n(t.input)} · out ${n(t.output)} (reasoning ${n(t.reasoning)}) · cache R ${n(t.cacheRead)} W ${n(t.cacheWrite)} · cost ${t.cost === null ? "unavailable" : cost(t.cost)}`;
}

function groups(title: string, gs: readonly ReceiptGroup[]): string[] {
  if (gs.length === 0) return [];
  return [`  by ${title}:`, ...gs.map((g) => `    ${g.key}: ${g.attempts} attempts, ${g.reported} reported · ${subtotal(g.subtotal)}`)];
}

export function receiptLines(r: ReceiptSummary): string[] {
  const out = ["Translator reported usage (separate from native totals; not a combined bill)"];
  if (r.attempts === 0) {
    out.push("  Unavailable; reporting starts after a receipt-capable Translator upgrade. Earlier usage is not backfilled.");
  } else {
    out.push(`  attempts ${r.attempts} · reported ${r.reported} · unreported ${r.unreported}`);
    out.push(`  reported subtotal: ${subtotal(r.subtotal)}`);
    out.push(...groups("provider/model", r.byModel), ...groups("direction", r.byDirection), ...groups("status", r.byStatus));
  }
  if (r.malformed + r.duplicates + r.conflictingIds > 0) {
    out.push(`  malformed ${r.malformed} · duplicate ${r.duplicates} · conflicting ids ${r.conflictingIds} (excluded)`);
  }
  return out;
}

function agentLines(rep: MetricsReport, details: boolean): string[] {
  const out = ["Other-agent observations (separate; never added to parent coverage or native totals)"];
  if (rep.agentSummaries.length === 0 && rep.delegations.length === 0) out.push("  none recorded on this branch");
  for (const a of rep.agentSummaries) {
    out.push(`  ${a.source}/${a.agentId}: EFF TPS ${rate(a.effTps, "tokens")} tok/s (covered ${a.covered}/${a.recorded})${a.active > 0 ? ` · ${a.active} active requests` : ""}`);
  }
  if (details) {
    for (const v of rep.agents) {
      const s = v.snapshot;
      out.push(
        `    ${s.source}/${s.agentId}/${s.requestId} ${v.displayState} basis=${s.timingBasis} model=${s.provider ?? UNKNOWN}/${s.model ?? UNKNOWN} TTFT ${elapsed(s.ttftMs, "latency")} response ${elapsed(s.responseMs, "latency")} elapsed ${elapsed(s.elapsedMs, "latency")} out ${s.outputTokens ?? UNKNOWN} reasoning ${s.reasoningTokens ?? UNKNOWN} stop ${s.stopReason ?? UNKNOWN} EFF ${rate(v.effTps, "tokens")} tool=${s.toolCallId ?? UNKNOWN} anchor=${s.anchorId}`,
      );
    }
  }
  for (const d of rep.delegations) {
    out.push(`  usage-only ${d.toolName || "tool"} (${d.mode}, ${d.results.length} results; breakdown only, no timing)`);
    if (details) {
      for (const r of d.results) {
        out.push(`    [${r.slot}] ${r.agent ?? UNKNOWN} ${r.model ?? UNKNOWN} exit ${r.exitCode ?? UNKNOWN} turns ${r.turns ?? UNKNOWN} in ${count(r.input)} out ${count(r.output)} cache R ${count(r.cacheRead)} W ${count(r.cacheWrite)} cost ${cost(r.cost)}`);
      }
    }
  }
  const rejected = [...rep.agentRejections.entries()];
  if (rejected.length > 0) out.push(`  rejected snapshots: ${rejected.map(([k, n]) => `${k} ${n}`).join(", ")}`);
  return out;
}

function jobLines(j: JobSection): string[] {
  const out = ["Job runtime (250 ms samples)"];
  if (j.samples === 0) {
    out.push("  no job figures recorded yet");
    return out;
  }
  const l = j.latest;
  out.push(
    `  now: ${l === null ? UNKNOWN : `${l.running} running · ${count(l.linesPerSecond)} lines/s · ${bytes(l.bytesPerSecond, "tight")}/s · event-loop p99 ${elapsed(l.eventLoopDelayP99Ms, "latency")}`}`,
    `  peak: ${j.peakRunning} running · ${count(j.peakLinesPerSecond)} lines/s · ${bytes(j.peakBytesPerSecond, "tight")}/s · event-loop p99 ${elapsed(j.peakEventLoopDelayP99Ms, "latency")} (${j.samples} samples)`,
  );
  return out;
}

export function nativeLines(n: NativeTotals): string[] {
  return [
    "Native usage (whole session file, Pi's stored accounting)",
    `  input ${count(n.input)} · output ${count(n.output)} · cache R ${count(n.cacheRead)} W ${count(n.cacheWrite)} · cost ${cost(n.cost)}`,
  ];
}

export function metricsSummary(rep: MetricsReport): string {
  const t = rep.throughput;
  const interrupted = rep.history.runs.filter((r) => r.state === "interrupted").length;
  const lines = [
    "Metrics (active branch)",
    ...means(rep),
    `Effective throughput: ${rate(t.tps, "tokens")} tok/s = ${count(t.outputTokens)} output / ${elapsed(t.streamMs, "latency")} observed stream (covered ${t.covered}/${t.recorded} requests)`,
    `  activities ${rep.history.runs.length}${interrupted > 0 ? ` · ${interrupted} interrupted/incomplete` : ""}`,
    ...nativeLines(rep.native),
    ...receiptLines(rep.receipts),
    ...agentLines(rep, false),
    ...jobLines(rep.jobs),
  ];
  return lines.join("\n");
}

export interface DetailsContext {
  footer: FooterModel;
  /** Every extension status, including known-idle ones the footer hides. */
  allStatuses: { key: string; text: string }[];
  footerOwned: boolean;
  footerEnabled: boolean;
  latestResponder: string | null;
}

export function metricsDetails(rep: MetricsReport, d: DetailsContext): string {
  const f = d.footer;
  const live = rep.live;
  const q = effQualifierText(f.effQualifier);
  const lines = [
    "Metrics details (read-only: edits are discarded, nothing is sent)",
    "",
    "Current activity (parent)",
    `  state ${live.activityState}${live.activityPartial ? " (partial: attached after start)" : ""} · requests ${live.requestCount} · tools running ${live.toolsRunning}`,
    `  TTFT (observed) ${elapsed(f.ttftMs, "latency")} · elapsed ${elapsed(live.activityElapsedMs, "latency")}`,
    `  EFF TPS ${rate(f.effTps, "tokens")} tok/s${q ? ` (${q})` : ""} · basis reported_output_tokens/observed_stream_elapsed_seconds`,
    `  OBS TPS ${f.obsTps === null ? "hidden (no positive live rate)" : `≈${rate(f.obsTps, "tokens")} tok/s`}`,
    `  last stop reason ${live.lastStopReason ?? UNKNOWN} · storage ${live.storageFailed ? "FAILED (capture incomplete)" : "ok"}`,
    "",
    "Header",
    `  directory ${f.cwd}`,
    `  git branch ${d.footerOwned ? (f.gitBranch ?? UNKNOWN) : "unavailable (Metrics does not own the footer)"}`,
    `  session ${f.sessionName ?? UNKNOWN} · model ${f.model ?? UNKNOWN}${f.thinkingLevel ? ` · thinking ${f.thinkingLevel}` : ""}`,
    `  latest responder ${d.latestResponder ?? UNKNOWN}`,
    "",
    "Context and cache (current branch)",
    `  CTX ${percent(f.contextPercent, 1, "?")} · ${f.contextTokens === null ? "?" : count(f.contextTokens)}/${f.contextWindow === null ? "?" : count(f.contextWindow)}`,
    `  cache HIT (latest finalized request) ${percent(f.cacheHit === null ? null : f.cacheHit * 100, 1)}`,
    "",
    ...nativeLines(rep.native),
    "",
    "Branch history",
    ...means(rep),
    `  effective throughput ${rate(rep.throughput.tps, "tokens")} tok/s (covered ${rep.throughput.covered}/${rep.throughput.recorded})`,
    `  retained estimate ${rep.history.retained === null ? UNKNOWN : `${rate(rep.history.retained.tps, "tokens")} tok/s`}`,
    ...rep.history.requests.map(
      (r) =>
        `    request ${r.requestId} schema ${r.schema} TTFT ${elapsed(r.ttftMs, "latency")} response ${elapsed(r.responseMs, "latency")} stream ${elapsed(r.streamMs, "latency")} out ${r.outputTokens ?? UNKNOWN} reasoning ${r.reasoningTokens ?? UNKNOWN} stop ${r.stopReason ?? UNKNOWN} ${r.provider ?? UNKNOWN}/${r.model ?? UNKNOWN}`,
    ),
    "",
    ...receiptLines(rep.receipts),
    "",
    ...agentLines(rep, true),
    "",
    ...jobLines(rep.jobs),
    "",
    `Footer ${d.footerEnabled ? "on" : "off"} · ${d.footerOwned ? "owned" : "not owned"} · ${f.collapsed ? "collapsed" : "expanded"}`,
    "Extension statuses (all, including hidden idle states)",
    ...(!d.footerOwned
      ? ["  unavailable (Metrics does not own the footer)"]
      : d.allStatuses.length === 0
        ? ["  none"]
        : d.allStatuses.map((s) => `  ${s.key}: ${s.text}`)),
    ...(f.warnings.length > 0 ? ["Warnings", ...f.warnings.map((w) => `  ${w}`)] : []),
  ];
  return lines.join("\n");
}
