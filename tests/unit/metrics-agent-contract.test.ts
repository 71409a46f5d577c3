import { describe, expect, it } from "vitest";
import { isIdentifier, validateAgentSnapshot, type AgentSnapshot } from "../../host/metrics/agent-contract.ts";
import { AgentStore, agentEffTps, agentViews, summarizeAgents } from "../../host/metrics/agent-store.ts";
import { ENTRY_AGENT } from "../../host/metrics/constants.ts";

const complete = (over: Partial<AgentSnapshot> = {}): AgentSnapshot => ({
  version: 1,
  source: "my-dispatcher",
  agentId: "agent-1",
  requestId: "req-1",
  sessionId: "sess-1",
  anchorId: "anchor1",
  toolCallId: null,
  provider: "faux",
  model: "faux-1",
  sequence: 2,
  state: "complete",
  timingBasis: "context_with_system",
  elapsedMs: 30_000,
  ttftMs: 20_000,
  responseMs: 25_000,
  outputTokens: 200,
  reasoningTokens: 150,
  stopReason: "stop",
  ...over,
});

const running = (over: Partial<AgentSnapshot> = {}): AgentSnapshot =>
  complete({ state: "running", sequence: 0, ttftMs: null, responseMs: null, outputTokens: null, reasoningTokens: null, stopReason: null, elapsedMs: 10, ...over });

const reason = (v: unknown) => {
  const r = validateAgentSnapshot(v);
  return r.ok ? "ok" : r.reason;
};

describe("agent contract v1 validation", () => {
  it("accepts the spec's complete example and derives 200 / 5 = 40 tok/s (not 200/30, not 350/5)", () => {
    const r = validateAgentSnapshot(complete());
    expect(r.ok).toBe(true);
    expect(agentEffTps(complete())).toBe(40);
  });

  it("rejects unknown fields, missing fields and any rate field", () => {
    expect(reason({ ...complete(), prompt: "hi" })).toBe("unknown_field");
    expect(reason({ ...complete(), effTps: 40 })).toBe("unknown_field");
    const { model: _m, ...missing } = complete();
    expect(reason(missing)).toBe("missing_field");
    expect(reason(null)).toBe("not_object");
    expect(reason([complete()])).toBe("not_object");
  });

  it("checks version and identifier syntax", () => {
    expect(reason(complete({ version: 2 as 1 }))).toBe("version");
    expect(isIdentifier("a.b:c/d@e+f-g_h")).toBe(true);
    expect(isIdentifier("ñandú1")).toBe(true);
    expect(isIdentifier("-lead")).toBe(false);
    expect(isIdentifier("has space")).toBe(false);
    expect(isIdentifier("bell\u0007")).toBe(false);
    expect(isIdentifier("")).toBe(false);
    expect(isIdentifier("a".repeat(256))).toBe(true);
    expect(isIdentifier("a".repeat(257))).toBe(false);
    expect(reason(complete({ agentId: "two words" }))).toBe("identifier");
    expect(reason(complete({ sessionId: null as unknown as string }))).toBe("identifier");
    expect(reason(complete({ toolCallId: "call_1", provider: null, model: null }))).toBe("ok");
  });

  it("checks sequence, state, basis and stop reason enums", () => {
    expect(reason(complete({ sequence: -1 }))).toBe("sequence");
    expect(reason(complete({ sequence: 1.5 }))).toBe("sequence");
    expect(reason(complete({ state: "done" as "complete" }))).toBe("state");
    expect(reason(complete({ timingBasis: "wall" as "unavailable" }))).toBe("timing_basis");
    expect(reason(complete({ stopReason: "pending" as "stop" }))).toBe("stop_reason");
  });

  it("checks timing values and the ordering ttftMs ≤ responseMs ≤ elapsedMs", () => {
    expect(reason(complete({ elapsedMs: -1 }))).toBe("timing_value");
    expect(reason(complete({ elapsedMs: Number.POSITIVE_INFINITY }))).toBe("timing_value");
    expect(reason(complete({ elapsedMs: Number.MAX_SAFE_INTEGER + 2 }))).toBe("timing_value");
    expect(reason(complete({ ttftMs: 26_000 }))).toBe("timing_order");
    expect(reason(complete({ responseMs: 31_000 }))).toBe("timing_order");
    expect(reason(complete({ ttftMs: null }))).toBe("ok"); // missing TTFT is allowed
    expect(reason(complete({ timingBasis: "unavailable" }))).toBe("unavailable_timing");
    expect(reason(complete({ timingBasis: "unavailable", elapsedMs: null, ttftMs: null, responseMs: null }))).toBe("ok");
    expect(reason(complete({ elapsedMs: null }))).toBe("missing_elapsed");
    expect(reason(complete({ responseMs: null }))).toBe("complete_without_response");
  });

  it("checks token counts and the reasoning subset", () => {
    expect(reason(complete({ outputTokens: 1.5 }))).toBe("token_value");
    expect(reason(complete({ reasoningTokens: 201 }))).toBe("reasoning_subset");
    expect(reason(complete({ outputTokens: null, reasoningTokens: 5 }))).toBe("reasoning_subset");
  });

  it("running snapshots carry no final fields; complete ones need a stop reason", () => {
    expect(reason(running())).toBe("ok");
    expect(reason(running({ stopReason: "stop" }))).toBe("running_final_fields");
    expect(reason(running({ outputTokens: 3 }))).toBe("running_final_fields");
    expect(reason(complete({ stopReason: null }))).toBe("complete_without_stop");
  });

  it("zero output, errors and unknown stream give no EFF TPS", () => {
    expect(agentEffTps(complete({ outputTokens: 0, reasoningTokens: 0 }))).toBeNull();
    expect(agentEffTps(complete({ stopReason: "error" }))).toBeNull();
    expect(agentEffTps(complete({ ttftMs: null }))).toBeNull();
    expect(agentEffTps(complete({ ttftMs: 25_000 }))).toBeNull();
  });
});

describe("agent store", () => {
  const ctx = { sessionId: "sess-1", branchIds: new Set(["anchor1"]) };

  it("dedups exact duplicates, ignores stale replays, rejects conflicts and counts rejections", () => {
    const store = new AgentStore();
    const first = store.decide(running(), ctx);
    expect(first.kind).toBe("accept");
    store.commit(running());
    expect(store.decide(running(), ctx).kind).toBe("duplicate");
    expect(store.decide(running({ elapsedMs: 11 }), ctx)).toEqual({ kind: "reject", reason: "conflicting_revision" });
    const s1 = running({ sequence: 1, ttftMs: 5, elapsedMs: 20 });
    expect(store.decide(s1, ctx).kind).toBe("accept");
    store.commit(s1);
    expect(store.decide(running(), ctx).kind).toBe("stale");
    expect(store.decide(running({ sequence: 2, ttftMs: 6, elapsedMs: 30 }), ctx)).toEqual({ kind: "reject", reason: "first_observation_changed" });
    expect(store.decide(running({ sequence: 2, ttftMs: 5, elapsedMs: 15 }), ctx)).toEqual({ kind: "reject", reason: "elapsed_backwards" });
    expect(store.decide(running({ sequence: 2, ttftMs: 5, elapsedMs: 30, anchorId: "anchor1", toolCallId: "x" }), ctx)).toEqual({ kind: "reject", reason: "attribution_changed" });
    expect(store.decide(running({ sequence: 2, ttftMs: 5, elapsedMs: 30, timingBasis: "external_request_start" }), ctx)).toEqual({ kind: "reject", reason: "timing_basis_changed" });
    const done = complete({ sequence: 3, ttftMs: 5, elapsedMs: 40, responseMs: 30 });
    expect(store.decide(done, ctx).kind).toBe("accept");
    store.commit(done);
    expect(store.decide(complete({ sequence: 4, ttftMs: 5, elapsedMs: 50, responseMs: 30 }), ctx)).toEqual({ kind: "reject", reason: "post_terminal_change" });
    expect(store.rejectedCount).toBe(6);
  });

  it("rejects mismatched sessions, anchors off the branch and wrong tool ids for details delivery", () => {
    const store = new AgentStore();
    expect(store.decide(complete({ sessionId: "other" }), ctx)).toEqual({ kind: "reject", reason: "session_mismatch" });
    expect(store.decide(complete({ anchorId: "elsewhere" }), ctx)).toEqual({ kind: "reject", reason: "anchor_not_on_branch" });
    expect(store.decide(complete({ toolCallId: "call_a" }), { ...ctx, expectedToolCallId: "call_b" })).toEqual({ kind: "reject", reason: "tool_call_mismatch" });
    expect(store.decide({ ...complete(), extra: 1 }, ctx)).toEqual({ kind: "reject", reason: "unknown_field" });
  });

  it("after restore, identities are frozen and seen invocations cannot attach new requests", () => {
    const store = new AgentStore();
    store.restore([{ type: "custom", customType: ENTRY_AGENT, data: { schema: 1, via: "bus", snapshot: running() } }]);
    expect(store.decide(running(), ctx).kind).toBe("duplicate");
    expect(store.decide(running({ sequence: 1, elapsedMs: 50 }), ctx)).toEqual({ kind: "reject", reason: "restored_identity" });
    expect(store.decide(complete({ requestId: "req-new" }), ctx)).toEqual({ kind: "reject", reason: "restored_invocation" });
    expect(store.decide(complete({ agentId: "fresh-agent" }), ctx).kind).toBe("accept");
    expect(store.rejectedCount).toBe(2);
    store.restore([]);
    expect(store.rejectedCount).toBe(0); // counts reset on restore/navigation
  });

  it("views: latest snapshot per identity; restored running shows as interrupted; summaries are stream-weighted", () => {
    const entry = (s: AgentSnapshot) => ({ type: "custom", customType: ENTRY_AGENT, data: { schema: 1, via: "bus", snapshot: s } });
    const views = agentViews(
      [entry(running()), entry(complete()), entry(complete({ requestId: "req-2", ttftMs: 0, responseMs: 1000, elapsedMs: 1000, outputTokens: 100, reasoningTokens: null })), entry(running({ requestId: "req-3" }))],
      new Set(),
    );
    expect(views.map((v) => v.displayState)).toEqual(["complete", "complete", "interrupted"]);
    const [sum] = summarizeAgents(views);
    // (200 + 100) / (5 s + 1 s) = 50, not the mean of 40 and 100
    expect(sum).toMatchObject({ recorded: 3, covered: 2, effTps: 50, active: 0 });
  });
});
