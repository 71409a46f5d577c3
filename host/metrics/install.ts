/**
 * Wires the metrics recorder into Pi: lifecycle hooks, the shared sampler subscription, persisted
 * entries and their restore, the agent bus and tool-details intake, subagent usage breakdowns, the
 * `/metrics` command, the `--metrics-no-footer` flag, Alt+M and the TUI footer. All arithmetic lives in
 * the pure modules next to this file; this one only translates Pi events and owns Pi objects.
 */
import { randomUUID } from "node:crypto";
import type { ExtensionAPI, ExtensionContext, ReadonlyFooterDataProvider, Theme } from "@earendil-works/pi-coding-agent";
import type { TUI, TuiMouseEvent, TuiMouseEventResult } from "@earendil-works/pi-tui";
import { isKnownIdle, sanitizeStatus } from "../../ui/metrics/format.ts";
import { renderFooter, type FooterStyle } from "../../ui/metrics/footer.ts";
import { metricsDetails, metricsSummary, type MetricsReport } from "../../ui/metrics/report.ts";
import type { Sampler } from "../sampler.ts";
import { AgentStore, agentViews, identityKey, summarizeAgents, type AgentEntryData, type AgentVia, type AgentView } from "./agent-store.ts";
import { AGENT_EVENT, ENTRY_AGENT, ENTRY_DELEGATION } from "./constants.ts";
import { readDelegation, type DelegationRecord } from "./delegation.ts";
import { branchAggregate, mean, readHistory, type History } from "./history.ts";
import { JobFigureLog } from "./job-figures.ts";
import { Recorder } from "./recorder.ts";
import type { ContextSnapshot } from "./records.ts";
import { summarizeReceipts } from "./receipts.ts";
import type { FooterModel, JobFigures, StatusItem } from "./snapshot.ts";
import { cacheHit, nativeTotals, type NativeTotals } from "./usage.ts";

export type { JobFigures } from "./snapshot.ts";

export interface MetricsOptions {
  sampler: Sampler;
  jobFigures?: () => JobFigures | null;
}

export const FLAG_NO_FOOTER = "metrics-no-footer";
const STATUS_KEY = "pi-metrics";
const FOOTER_SUBCOMMANDS = ["on", "off", "collapse", "expand", "toggle"] as const;

interface FooterState {
  /** The user wants the Metrics footer (flag, then /metrics footer on|off). */
  enabled: boolean;
  /** Metrics currently occupies Pi's one footer slot. */
  owned: boolean;
  collapsed: boolean;
  tui: TUI | null;
  data: ReadonlyFooterDataProvider | null;
  button: { start: number; end: number } | null;
}

export function installMetrics(pi: ExtensionAPI, options: MetricsOptions): void {
  pi.registerFlag(FLAG_NO_FOOTER, { description: "Start without the Metrics footer (recording continues)", type: "boolean", default: false });

  let ctx: ExtensionContext | null = null;
  let pendingError: unknown = null;
  let history: History = readHistory([]);
  let native: NativeTotals = nativeTotals([]);
  const agents = new AgentStore();
  const liveAgentKeys = new Set<string>();
  const delegatedEntries = new Set<string>();
  const jobs = new JobFigureLog();
  const footer: FooterState = { enabled: true, owned: false, collapsed: false, tui: null, data: null, button: null };
  const unsubs: (() => void)[] = [];
  let storageWarning: string | null = null;

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
    throw e instanceof Error ? new Error(`pi-metrics: session save failed: ${e.message}`) : new Error("pi-metrics: session save failed");
  };

  const refreshNative = (): void => {
    if (ctx !== null) native = nativeTotals(ctx.sessionManager.getEntries() as never);
  };

  let agentViewCache: AgentView[] | null = null;
  const branchAgentViews = (): AgentView[] => {
    // Footer renders happen on every keystroke: the branch scan runs only after something changed.
    agentViewCache ??= agentViews((ctx?.sessionManager.getBranch() ?? []) as never, liveAgentKeys);
    return agentViewCache;
  };

  const restore = (c: ExtensionContext): void => {
    agentViewCache = null;
    storageWarning = null;
    if (c.hasUI) c.ui.setStatus(STATUS_KEY, undefined);
    history = readHistory(c.sessionManager.getBranch() as never);
    recorder.reset(history.retained, history.lastUsage);
    agents.restore(c.sessionManager.getEntries() as never);
    liveAgentKeys.clear();
    delegatedEntries.clear();
    for (const e of c.sessionManager.getEntries()) {
      if (e.type === "custom" && e.customType === ENTRY_DELEGATION) {
        const id = (e.data as { toolResultEntryId?: unknown } | undefined)?.toolResultEntryId;
        if (typeof id === "string") delegatedEntries.add(id);
      }
    }
    refreshNative();
  };

  // ---- agents --------------------------------------------------------------------------------------

  const intake = (raw: unknown, via: AgentVia, expectedToolCallId?: string | null): void => {
    const c = ctx;
    if (c === null) return;
    const branchIds = new Set(c.sessionManager.getBranch().map((e) => e.id));
    const d = agents.decide(raw, { sessionId: c.sessionManager.getSessionId(), branchIds, ...(expectedToolCallId === undefined ? {} : { expectedToolCallId }) });
    if (d.kind !== "accept") {
      requestRender();
      return;
    }
    try {
      pi.appendEntry(ENTRY_AGENT, { schema: 1, via, snapshot: d.snapshot } satisfies AgentEntryData);
    } catch (error) {
      // Not committed: a retry of the same snapshot will be accepted once saving works again.
      if (c.hasUI) c.ui.setStatus(STATUS_KEY, "⚠ metrics: agent snapshot save failed");
      pendingError = error;
      return;
    }
    agents.commit(d.snapshot);
    agentViewCache = null;
    if (d.snapshot.state === "running") liveAgentKeys.add(identityKey(d.snapshot));
    else liveAgentKeys.delete(identityKey(d.snapshot));
    requestRender();
  };

  const detailsSnapshots = (result: unknown, toolCallId: string): void => {
    const details = (result as { details?: { piMetrics?: unknown } } | undefined)?.details;
    const list = details?.piMetrics;
    if (!Array.isArray(list)) return;
    for (const s of list) intake(s, "details", toolCallId);
  };

  // ---- footer --------------------------------------------------------------------------------------

  function requestRender(): void {
    footer.tui?.requestRender();
  }

  const statuses = (): { shown: StatusItem[]; all: StatusItem[] } => {
    const all: StatusItem[] = [];
    const map = footer.data?.getExtensionStatuses();
    if (map) for (const [key, text] of map) all.push({ key, text: sanitizeStatus(text) });
    // Our own status is drawn as a warning below; idle pairs stay in /metrics details only.
    const shown = all.filter((s) => s.key !== STATUS_KEY && !isKnownIdle(s.key, s.text));
    return { shown, all };
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
    const model = c?.model ? `${c.model.provider}/${c.model.id}` : null;
    return {
      cwd: shortenHome(c?.cwd ?? process.cwd()),
      gitBranch: footer.data?.getGitBranch() ?? null,
      sessionName: c?.sessionManager.getSessionName() ?? null,
      model,
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
              label: latestAgent.snapshot.agentId.slice(0, 12),
              ttftMs: latestAgent.snapshot.ttftMs,
              effTps: latestAgent.effTps,
              state: latestAgent.displayState,
              active: views.filter((v) => v.displayState === "running").length,
            },
      jobs: jobs.active(),
      statuses: statuses().shown,
      warnings,
      collapsed: footer.collapsed,
    };
  };

  const styleOf = (theme: Theme): FooterStyle => ({
    accent: (s) => theme.fg("accent", s),
    bold: (s) => theme.bold(s),
    dim: (s) => theme.fg("dim", s),
    muted: (s) => theme.fg("muted", s),
    warning: (s) => theme.fg("warning", s),
    error: (s) => theme.fg("error", s),
  });

  const toggleLayout = (): void => {
    footer.collapsed = !footer.collapsed;
    requestRender();
  };

  const claimFooter = (c: ExtensionContext): void => {
    if (c.mode !== "tui") return;
    c.ui.setFooter((tui, theme, data) => {
      footer.tui = tui;
      footer.data = data;
      footer.owned = true;
      const style = styleOf(theme);
      const unsubBranch = data.onBranchChange(() => tui.requestRender());
      let disposed = false;
      return {
        invalidate() {},
        render(width: number): string[] {
          const layout = renderFooter(footerModel(), width, style);
          footer.button = layout.button;
          return layout.lines;
        },
        handleMouse(event: TuiMouseEvent): TuiMouseEventResult | undefined {
          const b = footer.button;
          if (event.button !== "left" || event.y !== 0 || b === null || event.x < b.start || event.x >= b.end) return undefined;
          // Toggle on release/click only; the press is claimed so the transcript selection does not start.
          if (event.type === "click") toggleLayout();
          return event.type === "press" || event.type === "click" || event.type === "release" ? { handled: true } : undefined;
        },
        dispose() {
          if (disposed) return;
          disposed = true;
          unsubBranch();
          // Replaced by another extension or by our own release: either way we no longer own the slot.
          footer.owned = false;
          footer.tui = null;
          footer.data = null;
          footer.button = null;
        },
      };
    });
  };

  const releaseFooter = (c: ExtensionContext): void => {
    // Only restore Pi's footer if the slot is still ours; another extension's replacement is left alone.
    if (c.mode === "tui" && footer.owned) c.ui.setFooter(undefined);
  };

  // ---- lifecycle -----------------------------------------------------------------------------------

  pi.on("session_start", (_e, c) => {
    ctx = c;
    restore(c);
    footer.enabled = pi.getFlag(FLAG_NO_FOOTER) !== true;
    footer.collapsed = false;
    if (footer.enabled) claimFooter(c);
    unsubs.push(
      options.sampler.subscribe((now) => {
        recorder.tick(now);
        if (options.jobFigures) jobs.push(now, options.jobFigures());
        const v = recorder.view(now);
        if (v.activityState === "running" || jobs.active() !== null) requestRender();
      }),
      pi.events.on(AGENT_EVENT, (data) => intake(data, "bus")),
    );
    options.sampler.start();
  });

  pi.on("session_tree", (_e, c) => {
    ctx = c;
    restore(c);
    requestRender();
  });

  pi.on("session_shutdown", (_e, c) => {
    recorder.interrupt("shutdown");
    for (const u of unsubs.splice(0)) u();
    options.sampler.stop();
    releaseFooter(c);
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
    return undefined; // observe only: the messages are sent exactly as they are
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
      const entryId = e.toolResultEntryIds?.[i];
      detailsSnapshots(tr, tr.toolCallId);
      const rec: DelegationRecord | null = readDelegation(tr, entryId);
      if (rec === null || delegatedEntries.has(rec.toolResultEntryId)) return;
      try {
        pi.appendEntry(ENTRY_DELEGATION, rec);
        delegatedEntries.add(rec.toolResultEntryId);
      } catch (error) {
        pendingError = error;
      }
    });
    history = readHistory(c.sessionManager.getBranch() as never);
    requestRender();
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
    history = readHistory(c.sessionManager.getBranch() as never);
    requestRender();
    boundary();
  });

  // ---- commands ------------------------------------------------------------------------------------

  const report = (c: ExtensionContext): MetricsReport => {
    const branch = c.sessionManager.getBranch() as never;
    const entries = c.sessionManager.getEntries() as never;
    const h = readHistory(branch);
    const views = agentViews(branch, liveAgentKeys);
    const delegations: DelegationRecord[] = [];
    for (const e of c.sessionManager.getBranch()) {
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
      native: nativeTotals(entries),
      receipts: summarizeReceipts(entries),
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
  };

  pi.registerCommand("metrics", {
    description: "Metrics: summary; `details`; `footer on|off|collapse|expand|toggle`",
    getArgumentCompletions: (prefix) => {
      const all = ["details", ...FOOTER_SUBCOMMANDS.map((s) => `footer ${s}`)];
      const typed = prefix.trim();
      // A complete argument offers nothing more, so Enter submits the command instead of picking a completion.
      const items = all.filter((a) => a.startsWith(typed) && a !== typed).map((value) => ({ value, label: value }));
      return items.length > 0 ? items : null;
    },
    handler: async (args, c) => {
      ctx = c;
      refreshNative();
      const words = args.trim().split(/\s+/).filter(Boolean);
      if (words.length === 0) {
        c.ui.notify(metricsSummary(report(c)), "info");
        return;
      }
      if (words[0] === "details" && words.length === 1) {
        const text = metricsDetails(report(c), {
          footer: footerModel(),
          allStatuses: statuses().all,
          footerOwned: footer.owned,
          footerEnabled: footer.enabled,
          latestResponder: latestResponder(c),
        });
        // Inspection only: whatever the user edits or submits is discarded and nothing is sent.
        if (c.mode === "tui") await c.ui.editor("Metrics details (edits are discarded)", text);
        else c.ui.notify(text, "info");
        return;
      }
      if (words[0] === "footer" && words.length === 2) {
        switch (words[1]) {
          case "on":
            footer.enabled = true;
            claimFooter(c);
            break;
          case "off":
            footer.enabled = false;
            releaseFooter(c);
            break;
          case "collapse":
            footer.collapsed = true;
            break;
          case "expand":
            footer.collapsed = false;
            break;
          case "toggle":
            footer.collapsed = !footer.collapsed;
            break;
          default:
            c.ui.notify("Usage: /metrics footer on|off|collapse|expand|toggle", "warning");
            return;
        }
        requestRender();
        if (c.mode !== "tui") c.ui.notify("The Metrics footer needs the interactive terminal UI; recording continues.", "info");
        return;
      }
      c.ui.notify("Usage: /metrics [details | footer on|off|collapse|expand|toggle]", "warning");
    },
  });

  pi.registerShortcut("alt+m", {
    description: "Metrics: collapse or expand the footer",
    handler: () => {
      // Switching layout does not reclaim a footer another extension replaced.
      if (footer.owned) toggleLayout();
    },
  });
}

function latestResponder(c: ExtensionContext): string | null {
  const branch = c.sessionManager.getBranch();
  for (let i = branch.length - 1; i >= 0; i--) {
    const e = branch[i];
    if (e?.type === "message" && e.message.role === "assistant") {
      const m = e.message;
      return `${m.provider}/${m.responseModel ?? m.model}`;
    }
  }
  return null;
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
