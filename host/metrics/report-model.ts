/**
 * Gathers the numbers `/metrics` and `/metrics details` show, from the session entries and the live
 * recorder. Reads only: nothing is written, and receipts and agent records stay separate from native usage.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { MetricsReport } from "./report.ts";
import { agentViews, summarizeAgents, type AgentStore } from "./agent-store.ts";
import { ENTRY_DELEGATION } from "./constants.ts";
import type { DelegationRecord } from "./delegation.ts";
import { branchAggregate, mean, readHistory } from "./history.ts";
import type { JobRateLog } from "./job-rate-log.ts";
import { summarizeReceipts } from "./receipts.ts";
import type { Recorder } from "./recorder.ts";
import { nativeTotals } from "./usage.ts";

export function buildReport(c: ExtensionContext, recorder: Recorder, agents: AgentStore, liveAgentKeys: ReadonlySet<string>, jobs: JobRateLog): MetricsReport {
  const branch = c.sessionManager.getBranch();
  const entries = c.sessionManager.getEntries();
  const h = readHistory(branch as never);
  const views = agentViews(branch as never, liveAgentKeys);
  const delegations: DelegationRecord[] = [];
  for (const e of branch) {
    if (e.type === "custom" && e.customType === ENTRY_DELEGATION && e.data) delegations.push(e.data as DelegationRecord);
  }
  return {
    means: {
      activityTtft: mean(h.runs.map((r) => r.ttftMs)),
      activityElapsed: mean(h.runs.map((r) => r.elapsedMs)),
      requestTtft: mean(h.requests.map((r) => r.ttftMs)),
      requestResponse: mean(h.requests.map((r) => r.responseMs)),
    },
    throughput: branchAggregate(h.requests),
    history: h,
    live: recorder.view(performance.now()),
    native: nativeTotals(entries as never),
    receipts: summarizeReceipts(entries as never),
    agents: views,
    agentSummaries: summarizeAgents(views),
    agentRejections: agents.rejections,
    delegations,
    jobs: {
      latest: jobs.latest,
      samples: jobs.samples,
      peakRunning: jobs.peakRunning,
      peakLinesPerSecond: jobs.peakLinesPerSecond,
      peakBytesPerSecond: jobs.peakBytesPerSecond,
      peakEventLoopDelayP99Ms: jobs.peakEventLoopDelayP99Ms,
    },
  };
}

export function latestResponder(c: ExtensionContext): string | null {
  const branch = c.sessionManager.getBranch();
  for (let i = branch.length - 1; i >= 0; i--) {
    const e = branch[i];
    if (e?.type === "message" && e.message.role === "assistant") return `${e.message.provider}/${e.message.responseModel ?? e.message.model}`;
  }
  return null;
}
