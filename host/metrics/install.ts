/**
 * Wires the metrics recorder into Pi: lifecycle hooks, the shared sampler subscription, persisted entries
 * and their restore, the agent bus and tool-details intake, subagent usage breakdowns, the `--metrics-no-footer`
 * flag and the footer; the `/metrics` command and Alt+M (host/metrics/command.ts) read what it records. The
 * arithmetic lives in the pure modules next to this file; this one translates Pi events and owns the Pi objects.
 */
import { randomUUID } from "node:crypto";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { Sampler } from "../sampler.ts";
import { AgentStore, agentViews, identityKey, type AgentEntryData, type AgentVia, type AgentView } from "./agent-store.ts";
import { registerMetricsCommand } from "./command.ts";
import { AGENT_EVENT, ENTRY_AGENT, ENTRY_DELEGATION } from "./constants.ts";
import { readDelegation } from "./delegation.ts";
import { FooterSlot, STATUS_KEY } from "./footer-slot.ts";
import { readHistory } from "./history.ts";
import { JobRateLog } from "./job-rate-log.ts";
import { Recorder } from "./recorder.ts";
import type { ContextSnapshot } from "./records.ts";
import { buildReport } from "./report-model.ts";
import type { FooterModel, JobRates } from "./views.ts";
import { cacheHit, nativeTotals, type NativeTotals } from "./usage.ts";

export type { JobRates } from "./views.ts";

export interface MetricsOptions {
  sampler: Sampler;
  jobRates?: () => JobRates | null;
}

export const FLAG_NO_FOOTER = "metrics-no-footer";

export function installMetrics(pi: ExtensionAPI, options: MetricsOptions): void {
  pi.registerFlag(FLAG_NO_FOOTER, { description: "Start without the Metrics footer (recording continues)", type: "boolean", default: false });

  let ctx: ExtensionContext | null = null;
  let pendingError: unknown = null;
  let native: NativeTotals = nativeTotals([]);
  let storageWarning: string | null = null;
  let agentViewCache: AgentView[] | null = null;
  const agents = new AgentStore();
  const liveAgentKeys = new Set<string>();
  const delegatedEntries = new Set<string>();
  const jobs = new JobRateLog();
  const unsubs: (() => void)[] = [];

  const contextSnapshot = (): ContextSnapshot | null => {
    const u = ctx?.getContextUsage();
    return u === undefined ? null : { tokens: u.tokens, contextWindow: u.contextWindow, percent: u.percent };
  };

  const recorder = new Recorder({
    mono: () => performance.now(),
    iso: () => new Date().toISOString(),
    newId: () => randomUUID(),
    append: (customType, data) => pi.appendEntry(customType, data),
    context: contextSnapshot,
    sessionUsage: () => native,
    onStorageError: (error) => {
      storageWarning = "⚠ metrics save failed: capture incomplete";
      if (ctx?.hasUI) ctx.ui.setStatus(STATUS_KEY, storageWarning);
      pendingError = error;
    },
  });

  /** Save failures surface through Pi's extension error handler, at the boundary of the hook that hit them. */
  const boundary = (): void => {
    if (pendingError === null) return;
    const e = pendingError;
    pendingError = null;
    throw new Error(`pi-metrics: session save failed${e instanceof Error ? `: ${e.message}` : ""}`);
  };

  const refreshNative = (): void => {
    if (ctx !== null) native = nativeTotals(ctx.sessionManager.getEntries() as never);
  };

  const branchAgentViews = (): AgentView[] => {
    // The footer redraws on every keystroke: the branch is scanned again only after something changed.
    agentViewCache ??= agentViews((ctx?.sessionManager.getBranch() ?? []) as never, liveAgentKeys);
    return agentViewCache;
  };

  const footerModel = (): FooterModel => {
    const c = ctx;
    const live = recorder.view(performance.now());
    const u = c?.getContextUsage();
    const views = branchAgentViews();
    const latestAgent = views.at(-1);
    const warnings: string[] = [];
    if (storageWarning) warnings.push(storageWarning);
    if (agents.rejectedCount > 0) warnings.push(`⚠ ${agents.rejectedCount} agent snapshots rejected`);
    return {
      cwd: shortenHome(c?.cwd ?? process.cwd()),
      gitBranch: footer.gitBranch(),
      sessionName: c?.sessionManager.getSessionName() ?? null,
      model: c?.model ? `${c.model.provider}/${c.model.id}` : null,
      thinkingLevel: c?.thinkingLevel ?? null,
      activity: live.activityState,
      responseLabel: responseLabel(live.activityState, live.lastStopReason),
      ttftMs: live.activityTtftMs,
      effTps: live.effTps,
      effQualifier: live.effQualifier,
      obsTps: live.obsTps,
      inputTokens: native.input,
      outputTokens: native.output,
      cost: native.cost,
      cacheRead: native.cacheRead,
      cacheWrite: native.cacheWrite,
      cacheHit: cacheHit(live.lastUsage),
      contextPercent: u?.percent ?? null,
      contextTokens: u?.tokens ?? null,
      contextWindow: u?.contextWindow ?? null,
      agent:
        latestAgent === undefined
          ? null
          : {
              // Cut by code points: an id of astral characters must not end in half of one.
              label: [...latestAgent.snapshot.agentId].slice(0, 12).join(""),
              ttftMs: latestAgent.snapshot.ttftMs,
              effTps: latestAgent.effTps,
              state: latestAgent.displayState,
              active: views.filter((v) => v.displayState === "running").length,
            },
      jobs: jobs.active(),
      statuses: footer.statuses().shown,
      warnings,
      collapsed: footer.collapsed,
    };
  };

  const footer = new FooterSlot(footerModel);

  const restore = (c: ExtensionContext): void => {
    agentViewCache = null;
    storageWarning = null;
    if (c.hasUI) c.ui.setStatus(STATUS_KEY, undefined);
    const history = readHistory(c.sessionManager.getBranch() as never);
    recorder.reset(history.retained, history.lastUsage);
    const entries = c.sessionManager.getEntries();
    agents.restore(entries as never);
    liveAgentKeys.clear();
    delegatedEntries.clear();
    for (const e of entries) {
      if (e.type === "custom" && e.customType === ENTRY_DELEGATION) {
        const id = (e.data as { toolResultEntryId?: unknown } | undefined)?.toolResultEntryId;
        if (typeof id === "string") delegatedEntries.add(id);
      }
    }
    refreshNative();
  };

  // ---- external agents -----------------------------------------------------------------------------

  const intake = (raw: unknown, via: AgentVia, expectedToolCallId?: string | null): void => {
    const c = ctx;
    if (c === null) return;
    const branchIds = new Set(c.sessionManager.getBranch().map((e) => e.id));
    const d = agents.decide(raw, { sessionId: c.sessionManager.getSessionId(), branchIds, ...(expectedToolCallId === undefined ? {} : { expectedToolCallId }) });
    if (d.kind === "accept") {
      try {
        pi.appendEntry(ENTRY_AGENT, { schema: 1, via, snapshot: d.snapshot } satisfies AgentEntryData);
      } catch (error) {
        // Not committed: the same snapshot is accepted on a retry once saving works again. No payload is echoed.
        if (c.hasUI) c.ui.setStatus(STATUS_KEY, "⚠ metrics: agent snapshot save failed");
        pendingError = error;
        return;
      }
      agents.commit(d.snapshot);
      agentViewCache = null;
      if (d.snapshot.state === "running") liveAgentKeys.add(identityKey(d.snapshot));
      else liveAgentKeys.delete(identityKey(d.snapshot));
    }
    footer.requestRender();
  };

  const detailsSnapshots = (result: unknown, toolCallId: string): void => {
    const list = (result as { details?: { piMetrics?: unknown } } | undefined)?.details?.piMetrics;
    if (Array.isArray(list)) for (const s of list) intake(s, "details", toolCallId);
  };

  // ---- lifecycle -----------------------------------------------------------------------------------

  pi.on("session_start", (_e, c) => {
    ctx = c;
    restore(c);
    // Toggles are in memory only: every session start begins expanded, ownership from the flag.
    footer.enabled = pi.getFlag(FLAG_NO_FOOTER) !== true;
    footer.collapsed = false;
    if (footer.enabled) footer.claim(c);
    unsubs.push(
      options.sampler.subscribe((now) => {
        recorder.tick(now);
        if (options.jobRates) jobs.push(now, options.jobRates());
        if (recorder.view(now).activityState === "running" || jobs.active() !== null) footer.requestRender();
      }),
      pi.events.on(AGENT_EVENT, (data) => intake(data, "bus")),
    );
    options.sampler.start();
  });

  pi.on("session_tree", (_e, c) => {
    ctx = c;
    restore(c);
    footer.requestRender();
  });

  pi.on("session_shutdown", (_e, c) => {
    recorder.interrupt("shutdown");
    for (const u of unsubs.splice(0)) u();
    options.sampler.stop();
    footer.release(c);
    ctx = null;
    boundary();
  });

  pi.on("agent_start", (_e, c) => {
    ctx = c;
    recorder.agentStart();
    boundary();
  });

  pi.on("context_with_system", (_e, c) => {
    ctx = c;
    recorder.requestStart({ provider: c.model?.provider ?? null, model: c.model?.id ?? null, thinkingLevel: c.thinkingLevel ?? null });
    boundary();
    return undefined; // observe only: the request is sent exactly as Pi built it
  });

  pi.on("message_update", (e) => {
    const ame = e.assistantMessageEvent;
    if (ame.type === "text_delta") recorder.delta("text", ame.delta);
    else if (ame.type === "thinking_delta") recorder.delta("thinking", ame.delta);
    else if (ame.type === "toolcall_delta") recorder.delta("toolArgs", ame.delta);
    boundary();
  });

  pi.on("message_end", (e) => {
    if (e.message.role === "assistant") recorder.responseEnd(e.message);
    boundary();
  });

  pi.on("turn_end", (e, c) => {
    ctx = c;
    refreshNative();
    recorder.turnEnd({ message: e.message as never, messageEntryId: e.messageEntryId ?? null, toolResultEntryIds: e.toolResultEntryIds ?? [] });
    e.toolResults.forEach((tr, i) => {
      detailsSnapshots(tr, tr.toolCallId);
      // Only top-level finalized results have the durable entry id this usage-only breakdown links to.
      const rec = readDelegation(tr, e.toolResultEntryIds?.[i]);
      if (rec === null || delegatedEntries.has(rec.toolResultEntryId)) return;
      try {
        pi.appendEntry(ENTRY_DELEGATION, rec);
        delegatedEntries.add(rec.toolResultEntryId);
      } catch (error) {
        pendingError = error;
      }
    });
    footer.requestRender();
    boundary();
  });

  pi.on("tool_execution_start", (e) => {
    recorder.toolStart(e.toolCallId, e.toolName, e.parentToolCallId ?? null);
    boundary();
  });

  pi.on("tool_execution_update", (e) => {
    detailsSnapshots(e.partialResult, e.toolCallId);
    boundary();
  });

  pi.on("tool_execution_end", (e) => {
    recorder.toolEnd(e.toolCallId, e.isError);
    detailsSnapshots(e.result, e.toolCallId);
    boundary();
  });

  pi.on("agent_settled", (e, c) => {
    ctx = c;
    refreshNative();
    recorder.agentSettled(e.aborted);
    footer.requestRender();
    boundary();
  });

  // ---- command, shortcut ---------------------------------------------------------------------------

  registerMetricsCommand(pi, {
    footer,
    footerModel,
    enter: (c) => {
      ctx = c;
      refreshNative();
    },
    report: (c) => buildReport(c, recorder, agents, liveAgentKeys, jobs),
  });
}

/** Failed, aborted, deferred and truncated responses are labeled; a normal stop or tool round is not. */
function responseLabel(activity: string, stopReason: string | null): string | null {
  if (activity === "interrupted") return "interrupted";
  return stopReason === "error" || stopReason === "aborted" || stopReason === "deferred" || stopReason === "length" ? stopReason : null;
}

function shortenHome(path: string): string {
  const home = process.env.HOME;
  return home && path.startsWith(home) ? `~${path.slice(home.length)}` : path;
}
