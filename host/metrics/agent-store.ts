/**
 * The parent's registry of external agent snapshots: dedup by (source, agentId, requestId) across the whole
 * session file, stale replays ignored, conflicting revisions rejected and counted. It decides; the caller
 * persists, and only a successful save is committed, so a failed save can be retried. Pure.
 */
import { ENTRY_AGENT } from "./constants.ts";
import { agentStreamMs, sameSnapshot, validateAgentSnapshot, type AgentSnapshot } from "./agent-contract.ts";
import { requestEligibility } from "./throughput.ts";

export type AgentVia = "bus" | "details";

export interface AgentEntryData {
  schema: 1;
  via: AgentVia;
  snapshot: AgentSnapshot;
}

export type AgentDecision =
  | { kind: "accept"; snapshot: AgentSnapshot }
  | { kind: "duplicate" }
  | { kind: "stale" }
  | { kind: "reject"; reason: string };

export interface AgentContext {
  sessionId: string;
  /** Entry ids on the current branch: anchors must be among them. */
  branchIds: ReadonlySet<string>;
  /** For details delivery, the tool id of the event carrying the snapshot. */
  expectedToolCallId?: string | null;
}

const key = (s: { source: string; agentId: string; requestId: string }): string => `${s.source}\u0000${s.agentId}\u0000${s.requestId}`;
const agentKey = (s: { source: string; agentId: string }): string => `${s.source}\u0000${s.agentId}`;

export class AgentStore {
  private readonly latest = new Map<string, AgentSnapshot>();
  /** Identities restored from history: frozen, late callbacks cannot advance them. */
  private readonly restored = new Set<string>();
  private readonly restoredAgents = new Set<string>();
  readonly rejections = new Map<string, number>();

  /** Rebuilds dedup state from every agent entry of the session file (abandoned branches too). */
  restore(allEntries: readonly { type: string; customType?: string; data?: unknown }[]): void {
    this.latest.clear();
    this.restored.clear();
    this.restoredAgents.clear();
    this.rejections.clear();
    for (const e of allEntries) {
      const s = readAgentEntry(e);
      if (s === null) continue;
      const prev = this.latest.get(key(s));
      if (prev === undefined || s.sequence > prev.sequence) this.latest.set(key(s), s);
      this.restored.add(key(s));
      this.restoredAgents.add(agentKey(s));
    }
  }

  decide(input: unknown, ctx: AgentContext): AgentDecision {
    const v = validateAgentSnapshot(input);
    if (!v.ok) return this.reject(v.reason);
    const s = v.snapshot;
    if (s.sessionId !== ctx.sessionId) return this.reject("session_mismatch");
    if (!ctx.branchIds.has(s.anchorId)) return this.reject("anchor_not_on_branch");
    if (ctx.expectedToolCallId !== undefined && s.toolCallId !== ctx.expectedToolCallId) return this.reject("tool_call_mismatch");
    const prev = this.latest.get(key(s));
    if (prev === undefined) {
      if (this.restoredAgents.has(agentKey(s))) return this.reject("restored_invocation");
      return { kind: "accept", snapshot: s };
    }
    if (sameSnapshot(prev, s)) return { kind: "duplicate" };
    if (s.sequence < prev.sequence) return { kind: "stale" };
    if (s.sequence === prev.sequence) return this.reject("conflicting_revision");
    if (this.restored.has(key(s))) return this.reject("restored_identity");
    if (prev.state !== "running") return this.reject("post_terminal_change");
    if (s.sessionId !== prev.sessionId || s.anchorId !== prev.anchorId || s.toolCallId !== prev.toolCallId) return this.reject("attribution_changed");
    if (s.timingBasis !== prev.timingBasis) return this.reject("timing_basis_changed");
    if (prev.ttftMs !== null && s.ttftMs !== prev.ttftMs) return this.reject("first_observation_changed");
    if (prev.elapsedMs !== null && (s.elapsedMs === null || s.elapsedMs < prev.elapsedMs)) return this.reject("elapsed_backwards");
    return { kind: "accept", snapshot: s };
  }

  /** Called only after the snapshot was saved. */
  commit(s: AgentSnapshot): void {
    this.latest.set(key(s), s);
  }

  private reject(reason: string): AgentDecision {
    this.rejections.set(reason, (this.rejections.get(reason) ?? 0) + 1);
    return { kind: "reject", reason };
  }

  get rejectedCount(): number {
    let n = 0;
    for (const v of this.rejections.values()) n += v;
    return n;
  }
}

export function readAgentEntry(e: { type: string; customType?: string; data?: unknown }): AgentSnapshot | null {
  if (e.type !== "custom" || e.customType !== ENTRY_AGENT || typeof e.data !== "object" || e.data === null) return null;
  const v = validateAgentSnapshot((e.data as { snapshot?: unknown }).snapshot);
  return v.ok ? v.snapshot : null;
}

export interface AgentView {
  snapshot: AgentSnapshot;
  /** Restored running snapshots lost their boundary: displayed as interrupted. */
  displayState: "running" | "complete" | "interrupted";
  effTps: number | null;
}

export interface AgentSummary {
  source: string;
  agentId: string;
  recorded: number;
  covered: number;
  outputTokens: number;
  streamMs: number;
  effTps: number | null;
  active: number;
}

/** Active-branch agent observations: latest snapshot per identity; restored running ones are interrupted. */
export function agentViews(branch: readonly { type: string; customType?: string; data?: unknown }[], liveKeys: ReadonlySet<string>): AgentView[] {
  const latest = new Map<string, AgentSnapshot>();
  for (const e of branch) {
    const s = readAgentEntry(e);
    if (s === null) continue;
    const prev = latest.get(key(s));
    if (prev === undefined || s.sequence > prev.sequence) latest.set(key(s), s);
  }
  return [...latest.entries()].map(([k, s]) => {
    const displayState = s.state === "running" && !liveKeys.has(k) ? "interrupted" : s.state;
    return { snapshot: s, displayState, effTps: displayState === "complete" ? agentEffTps(s) : null };
  });
}

export function agentEffTps(s: AgentSnapshot): number | null {
  const e = requestEligibility({ stopReason: s.stopReason, outputTokens: s.outputTokens, reasoningTokens: s.reasoningTokens, streamMs: agentStreamMs(s) });
  return s.state === "complete" && e.eligible ? e.tps : null;
}

/** Per-agent covered output / covered stream seconds, never a sum of parallel rates. */
export function summarizeAgents(views: readonly AgentView[]): AgentSummary[] {
  const by = new Map<string, AgentSummary>();
  for (const v of views) {
    const s = v.snapshot;
    const k = agentKey(s);
    let sum = by.get(k);
    if (sum === undefined) {
      sum = { source: s.source, agentId: s.agentId, recorded: 0, covered: 0, outputTokens: 0, streamMs: 0, effTps: null, active: 0 };
      by.set(k, sum);
    }
    sum.recorded++;
    if (v.displayState === "running") sum.active++;
    if (v.effTps !== null) {
      sum.covered++;
      sum.outputTokens += s.outputTokens ?? 0;
      sum.streamMs += agentStreamMs(s) ?? 0;
    }
  }
  for (const s of by.values()) s.effTps = s.covered > 0 ? s.outputTokens / (s.streamMs / 1000) : null;
  return [...by.values()];
}

export function identityKey(s: AgentSnapshot): string {
  return key(s);
}
