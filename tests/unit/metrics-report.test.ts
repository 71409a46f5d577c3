import { describe, expect, it } from "vitest";
import type { History } from "../../host/metrics/history.ts";
import type { LiveView } from "../../host/metrics/live-view.ts";
import { summarizeReceipts } from "../../host/metrics/receipts.ts";
import type { FooterModel } from "../../host/metrics/views.ts";
import { metricsDetails, metricsSummary, receiptLines, type MetricsReport } from "../../host/metrics/report.ts";

const live: LiveView = {
  activityState: "settled",
  activityPartial: false,
  activityTtftMs: 840,
  activityElapsedMs: 9000,
  requestOpen: false,
  requestCount: 2,
  effTps: 38.4,
  effQualifier: "final",
  obsTps: null,
  toolsRunning: 0,
  lastStopReason: "stop",
  lastUsage: null,
  storageFailed: false,
};

const history: History = { requests: [], runs: [], retained: null, lastUsage: null };

function report(over: Partial<MetricsReport> = {}): MetricsReport {
  return {
    means: {
      activityTtft: { mean: 840, count: 2 },
      activityElapsed: { mean: 9000, count: 2 },
      requestTtft: { mean: 500, count: 3 },
      requestResponse: { mean: 2500, count: 3 },
    },
    throughput: { tps: 40, outputTokens: 200, streamMs: 5000, covered: 1, recorded: 3 },
    history,
    live,
    native: { input: 1200, output: 300, cacheRead: 0, cacheWrite: 0, cost: 0.5 },
    receipts: summarizeReceipts([]),
    agents: [],
    agentSummaries: [],
    agentRejections: new Map(),
    delegations: [],
    jobs: { latest: null, samples: 0, peakRunning: 0, peakLinesPerSecond: 0, peakBytesPerSecond: 0, peakEventLoopDelayP99Ms: null },
    ...over,
  };
}

describe("/metrics text", () => {
  it("reports stream-weighted throughput with covered/recorded counts and separate ledgers", () => {
    const text = metricsSummary(report());
    expect(text).toContain("Effective throughput: 40.0 tok/s = 200 output / 5.00s observed stream (covered 1/3 requests)");
    expect(text).toContain("activity TTFT (observed): 840ms (n=2)");
    expect(text).toContain("Native usage (whole session file, Pi's stored accounting)\n  input 1.2k · output 300");
    expect(text).toContain("Translator reported usage (separate from native totals; not a combined bill)");
  });

  it("says when there are no receipts, and shows unsafe subtotals as unavailable", () => {
    expect(receiptLines(summarizeReceipts([])).join("\n")).toContain("Unavailable; reporting starts after a receipt-capable Translator upgrade");
    const big = Number.MAX_SAFE_INTEGER - 1;
    const r = (id: string) => ({
      type: "custom",
      customType: "orbit.translator.usage.v1",
      data: { version: 1, requestId: id, provider: "p", model: "m", status: "ok", direction: "input", nativeAccounting: false, usage: { input: big, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: big, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } } },
    });
    expect(receiptLines(summarizeReceipts([r("a"), r("b")])).join("\n")).toContain("reported subtotal: in unavailable · out 2");
  });

  it("details list every status, including idle ones, only when Metrics owns the footer", () => {
    const footer = { cwd: "~/p", gitBranch: "main", sessionName: null, model: "faux/faux-1", thinkingLevel: "off", activity: "settled", responseLabel: null, ttftMs: 840, effTps: 38.4, effQualifier: "final", obsTps: null, inputTokens: 0, outputTokens: 0, cost: 0, cacheRead: 0, cacheWrite: 0, cacheHit: null, contextPercent: null, contextTokens: null, contextWindow: null, agent: null, jobs: null, statuses: [], warnings: [], collapsed: false } satisfies FooterModel;
    const owned = metricsDetails(report(), { footer, allStatuses: [{ key: "lsp", text: "LSP: idle" }], footerOwned: true, footerEnabled: true, latestResponder: "faux/faux-1" });
    expect(owned).toContain("lsp: LSP: idle");
    expect(owned).toContain("git branch main");
    expect(owned).toContain("OBS TPS hidden (no positive live rate)");
    const notOwned = metricsDetails(report(), { footer, allStatuses: [], footerOwned: false, footerEnabled: false, latestResponder: null });
    expect(notOwned).toContain("git branch unavailable (Metrics does not own the footer)");
    expect(notOwned).toContain("Extension statuses (all, including hidden idle states)\n  unavailable (Metrics does not own the footer)");
  });
});
