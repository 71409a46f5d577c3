/**
 * Agent bridge: an inline extension factory for a child SDK session. It observes the child's own request
 * boundaries (context_with_system → first non-empty delta → message_end → turn_end usage) and publishes
 * numeric contract v1 snapshots through the dispatcher's `emit`. It starts nothing: no timers, no model
 * calls, no prompt changes. Attribution (session, anchor, tool id) is captured once and never retargeted.
 */
import { randomUUID } from "node:crypto";
import type { ExtensionAPI, ExtensionFactory } from "@earendil-works/pi-coding-agent";
import { isIdentifier, type AgentSnapshot, type AgentStop, validateAgentSnapshot } from "./agent-contract.ts";

export interface AgentMetricsBridgeOptions {
  source: string;
  agentId: string;
  sessionId: string;
  anchorId: string;
  toolCallId: string | null;
  emit: (snapshot: AgentSnapshot) => void;
  /** Monotonic clock; injectable for tests. */
  now?: () => number;
}

interface ChildRequest {
  requestId: string;
  start: number;
  ttft: number | null;
  response: number | null;
  sequence: number;
  done: boolean;
}

const STOPS = new Set<string>(["stop", "length", "toolUse", "error", "aborted", "deferred"]);

export function createAgentMetricsBridge(options: AgentMetricsBridgeOptions): ExtensionFactory {
  const { source, agentId, sessionId, anchorId, toolCallId, emit } = options;
  for (const [name, v] of [["source", source], ["agentId", agentId], ["sessionId", sessionId], ["anchorId", anchorId]] as const) {
    if (!isIdentifier(v)) throw new Error(`createAgentMetricsBridge: ${name} is not a valid identifier`);
  }
  if (toolCallId !== null && !isIdentifier(toolCallId)) throw new Error("createAgentMetricsBridge: toolCallId is not a valid identifier");
  const now = options.now ?? (() => performance.now());

  return (pi: ExtensionAPI) => {
    let current: ChildRequest | null = null;

    const publish = (r: ChildRequest, fields: Partial<AgentSnapshot> & Pick<AgentSnapshot, "state">): void => {
      const t = now();
      const snapshot = {
        version: 1 as const,
        source,
        agentId,
        requestId: r.requestId,
        sessionId,
        anchorId,
        toolCallId,
        provider: null,
        model: null,
        sequence: r.sequence++,
        timingBasis: "context_with_system" as const,
        elapsedMs: t - r.start,
        ttftMs: r.ttft === null ? null : r.ttft - r.start,
        responseMs: null,
        outputTokens: null,
        reasoningTokens: null,
        stopReason: null,
        ...fields,
      };
      const v = validateAgentSnapshot(snapshot);
      // Never publish something the parent would reject; a bad provider/model id degrades to null instead.
      if (v.ok) emit(v.snapshot);
    };

    const interrupt = (): void => {
      const r = current;
      if (r === null || r.done) return;
      r.done = true;
      publish(r, { state: "interrupted", responseMs: r.response === null ? null : r.response - r.start });
    };

    pi.on("context_with_system", () => {
      interrupt();
      current = { requestId: randomUUID(), start: now(), ttft: null, response: null, sequence: 0, done: false };
      publish(current, { state: "running" });
      return undefined;
    });

    pi.on("message_update", (event) => {
      const r = current;
      if (r === null || r.done || r.ttft !== null || r.response !== null) return;
      const ame = event.assistantMessageEvent;
      if ((ame.type === "text_delta" || ame.type === "thinking_delta" || ame.type === "toolcall_delta") && ame.delta.length > 0) {
        r.ttft = now();
        publish(r, { state: "running" });
      }
    });

    pi.on("message_end", (event) => {
      const r = current;
      if (r === null || r.done || event.message.role !== "assistant") return;
      // The response clock freezes here, before the child's tools run.
      if (r.response === null) r.response = now();
    });

    pi.on("turn_end", (event) => {
      const r = current;
      const m = event.message;
      if (r === null || r.done || m.role !== "assistant") return;
      if (r.response === null) r.response = now();
      r.done = true;
      const out = m.usage?.output;
      const reasoning = m.usage?.reasoning;
      const outputTokens = typeof out === "number" && Number.isSafeInteger(out) && out >= 0 ? out : null;
      const reasoningTokens =
        outputTokens !== null && typeof reasoning === "number" && Number.isSafeInteger(reasoning) && reasoning >= 0 && reasoning <= outputTokens ? reasoning : null;
      publish(r, {
        state: "complete",
        provider: isIdentifier(m.provider) ? m.provider : null,
        model: isIdentifier(m.model) ? m.model : null,
        responseMs: r.response - r.start,
        outputTokens,
        reasoningTokens,
        stopReason: STOPS.has(m.stopReason) ? (m.stopReason as AgentStop) : "error",
      });
    });

    pi.on("agent_settled", () => interrupt());
    pi.on("session_shutdown", () => interrupt());
  };
}
