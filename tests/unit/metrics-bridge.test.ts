import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { validateAgentSnapshot, type AgentSnapshot } from "../../host/metrics/agent-contract.ts";
import { createAgentMetricsBridge } from "../../host/metrics/bridge.ts";

/** A stand-in for the child's ExtensionAPI: records handlers so the test can drive the child's lifecycle. */
function fakeChild() {
  const handlers = new Map<string, ((event: any) => unknown)[]>();
  const pi = {
    on(name: string, fn: (event: any) => unknown) {
      handlers.set(name, [...(handlers.get(name) ?? []), fn]);
      return () => undefined;
    },
  } as unknown as ExtensionAPI;
  const fire = (name: string, event: unknown = {}) => {
    for (const fn of handlers.get(name) ?? []) fn(event);
  };
  return { pi, fire, handlers };
}

function setup() {
  const clock = { t: 1000 };
  const out: AgentSnapshot[] = [];
  const factory = createAgentMetricsBridge({
    source: "my-dispatcher",
    agentId: "agent-7",
    sessionId: "sess-1",
    anchorId: "entry42",
    toolCallId: "call_1",
    emit: (s) => out.push(s),
    now: () => clock.t,
  });
  const child = fakeChild();
  void factory(child.pi);
  return { clock, out, ...child };
}

const delta = (type: string, d: string) => ({ assistantMessageEvent: { type, delta: d } });
const assistant = (over: Record<string, unknown> = {}) => ({
  message: { role: "assistant", provider: "faux", model: "faux-1", stopReason: "stop", usage: { output: 200, reasoning: 150 }, ...over },
});

describe("agent metrics bridge", () => {
  it("publishes start, first observation and the final snapshot: the spec's 30 s example", () => {
    const b = setup();
    b.fire("context_with_system");
    b.clock.t += 20_000;
    b.fire("message_update", delta("text_delta", ""));
    b.fire("message_update", delta("thinking_delta", "hm"));
    b.clock.t += 5_000;
    b.fire("message_update", delta("text_delta", "more"));
    b.fire("message_end", assistant());
    b.clock.t += 5_000; // child tools run here: excluded from responseMs
    b.fire("turn_end", assistant());
    expect(b.out.map((s) => [s.sequence, s.state, s.ttftMs, s.responseMs, s.elapsedMs])).toEqual([
      [0, "running", null, null, 0],
      [1, "running", 20_000, null, 20_000],
      [2, "complete", 20_000, 25_000, 30_000],
    ]);
    const final = b.out.at(-1) as AgentSnapshot;
    expect(final).toMatchObject({ source: "my-dispatcher", agentId: "agent-7", sessionId: "sess-1", anchorId: "entry42", toolCallId: "call_1", outputTokens: 200, reasoningTokens: 150, stopReason: "stop", provider: "faux", model: "faux-1", timingBasis: "context_with_system" });
    for (const s of b.out) expect(validateAgentSnapshot(s).ok).toBe(true);
    expect(new Set(b.out.map((s) => s.requestId)).size).toBe(1);
  });

  it("gives every child request its own id and interrupts a request that loses its boundary", () => {
    const b = setup();
    b.fire("context_with_system");
    b.clock.t += 10;
    b.fire("context_with_system"); // the first request never finished
    b.clock.t += 10;
    b.fire("agent_settled", { aborted: true });
    const states = b.out.map((s) => s.state);
    expect(states).toEqual(["running", "interrupted", "running", "interrupted"]);
    expect(b.out[0]?.requestId).not.toBe(b.out[2]?.requestId);
    b.fire("session_shutdown");
    expect(b.out).toHaveLength(4); // already terminal: nothing more
  });

  it("degrades identifiers that break the contract to null instead of publishing an invalid snapshot", () => {
    const b = setup();
    b.fire("context_with_system");
    b.clock.t += 5;
    b.fire("message_end", assistant());
    b.fire("turn_end", assistant({ model: "model with spaces", usage: { output: 10, reasoning: 99 } }));
    const final = b.out.at(-1) as AgentSnapshot;
    expect(final).toMatchObject({ state: "complete", model: null, outputTokens: 10, reasoningTokens: null, ttftMs: null });
  });

  it("refuses invalid attribution up front", () => {
    expect(() => createAgentMetricsBridge({ source: "bad source", agentId: "a", sessionId: "s", anchorId: "x", toolCallId: null, emit: () => undefined })).toThrow(/source/);
  });

  it("registers only observers: no command, tool, timer or prompt change", () => {
    const b = setup();
    expect([...b.handlers.keys()].sort()).toEqual(["agent_settled", "context_with_system", "message_end", "message_update", "session_shutdown", "turn_end"]);
    for (const fn of b.handlers.get("context_with_system") ?? []) expect(fn({ messages: [] })).toBeUndefined();
  });
});
