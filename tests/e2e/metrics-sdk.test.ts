/**
 * The metrics recorder in real Pi (in process, through Pi's own extension loader), answered by the faux
 * provider streaming at a set speed after a slow first token. Checks what is measured, what is persisted,
 * and what comes back after reopening the session and after branch navigation.
 */
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@earendil-works/pi-ai";
import type { AgentSession } from "@earendil-works/pi-coding-agent";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_EVENT, ENTRY_AGENT, ENTRY_DELEGATION, ENTRY_RECEIPT, ENTRY_REQUEST, ENTRY_RUN, ENTRY_TRACE } from "../../host/metrics/constants.ts";
import { createAgentMetricsBridge } from "../../host/metrics/bridge.ts";
import { rate } from "../../shared/format.ts";
import { makeTempDir, removeDir } from "./harness/paths.ts";
import { startSdkSession, type SdkSession, type SdkSessionOptions } from "./harness/sdk.ts";

const ENTRY = resolve(import.meta.dirname, "../fixtures/metrics-extension.ts");
const SUBAGENT_TOOL = resolve(import.meta.dirname, "../fixtures/metrics-subagent-tool.ts");
const TPS = 200;
const WAIT_MS = 1200;
/** 800 characters ≈ 200 tokens by the faux provider's own estimate: about one second of stream at 200 tok/s. */
const ANSWER = "lorem ipsum dolor sit amet ".repeat(30).slice(0, 800);

let dir: string;
const open: SdkSession[] = [];

beforeAll(() => {
  dir = makeTempDir("metrics-e2e");
});

afterAll(async () => {
  await Promise.allSettled(open.map((sdk) => sdk.dispose()));
  removeDir(dir);
});

function slow(text: string) {
  return async () => {
    await new Promise((r) => setTimeout(r, WAIT_MS));
    return fauxAssistantMessage([fauxText(text)]);
  };
}

interface Started extends SdkSession {
  notes: string[];
  statuses: Map<string, string | undefined>;
}

/** The metrics recorder (and `extensions`) in an RPC-like session whose UI keeps notifications and statuses. */
async function start(options: Pick<SdkSessionOptions, "sessionDir" | "sessionFile"> = {}, extensions: string[] = []): Promise<Started> {
  const notes: string[] = [];
  const statuses = new Map<string, string | undefined>();
  const sdk = await startSdkSession({
    ...options,
    extensions: [ENTRY, ...extensions],
    tokensPerSecond: TPS,
    mode: "rpc",
    ui: { notify: (msg) => void notes.push(msg), setStatus: (key, text) => void statuses.set(key, text) },
  });
  open.push(sdk);
  return { ...sdk, notes, statuses };
}

const customs = (session: AgentSession, type: string, scope: "branch" | "all" = "branch") =>
  (scope === "branch" ? session.sessionManager.getBranch() : session.sessionManager.getEntries())
    .filter((e) => e.type === "custom" && e.customType === type)
    .map((e) => (e as { data: any }).data);

async function details(s: Started): Promise<string> {
  s.notes.length = 0;
  await s.session.prompt("/metrics details");
  return s.notes.join("\n");
}

describe("metrics in real Pi", () => {
  let file: string;
  let firstRate = 0;
  let scaledRate = 0;
  let firstRunFinalId = "";

  it("records TTFT and EFF TPS that exclude the first-token wait", async () => {
    const sessDir = join(dir, "sessions");
    const s = await start({ sessionDir: sessDir });
    file = s.session.sessionManager.getSessionFile() as string;
    s.faux.setResponses([slow(ANSWER)]);
    await s.session.prompt("go");
    const [req] = customs(s.session, ENTRY_REQUEST);
    expect(req).toBeDefined();
    expect(req.ttftMs).toBeGreaterThanOrEqual(WAIT_MS);
    expect(req.streamMs).toBeGreaterThan(300);
    expect(req.responseMs).toBeCloseTo(req.ttftMs + req.streamMs, 6);
    expect(req.usage.output).toBe(200);
    // EFF TPS is output / observed stream seconds — the first-token wait is not in the divisor — and lands near
    // the configured speed (loose bounds: chunk timing and a busy machine make it approximate).
    expect(req.outputTps).toBeCloseTo(200 / (req.streamMs / 1000), 9);
    expect(req.outputTps).toBeGreaterThan(TPS * 0.3);
    expect(req.outputTps).toBeLessThan(TPS * 3);
    expect(req.observed.textChars).toBe(800);
    expect(req.sampleCount).toBeGreaterThan(4); // 250 ms samples through the silent wait and the stream
    const samples = customs(s.session, ENTRY_TRACE).filter((t) => t.kind === "samples");
    expect(samples.reduce((n, c) => n + c.sampleCount, 0) + req.samples.length).toBe(req.sampleCount);
    expect(samples.flatMap((c) => c.samples).some((x: { obsTps: number | null; chars: number }) => x.chars === 0)).toBe(true);
    const run = customs(s.session, ENTRY_RUN).at(-1);
    expect(run).toMatchObject({ phase: "final", state: "settled", coveredRequests: 1 });
    expect(run.ttftMs).toBeGreaterThanOrEqual(WAIT_MS);
    expect(run.effTps).toBeCloseTo(req.outputTps, 9);
    firstRate = req.outputTps;
    firstRunFinalId = s.session.sessionManager.getLeafId() as string;
    expect(JSON.stringify(s.session.sessionManager.getEntries().filter((e) => e.type === "custom"))).not.toContain("lorem");

    // Final usage is taken at turn_end, after message_end transformations.
    s.faux.setResponses([slow(`[x10]${ANSWER.slice(5)}`)]);
    await s.session.prompt("again");
    const second = customs(s.session, ENTRY_REQUEST).at(-1);
    expect(second.usage.output).toBe(2000);
    scaledRate = second.outputTps;
    expect(scaledRate).toBeGreaterThan(firstRate * 4);

    const text = await details(s);
    expect(text).toContain(`retained estimate ${rate(scaledRate, "tokens")} tok/s`);
    s.notes.length = 0;
    await s.session.prompt("/metrics");
    const summary = s.notes.join("\n");
    expect(summary).toContain("(covered 2/2 requests)");
    expect(summary).toContain("Translator reported usage");
    expect(summary).toContain("Unavailable; reporting starts after a receipt-capable Translator upgrade");
    await s.dispose();
  });

  it("restores records after reopening the session, and branch navigation restores the right estimate", async () => {
    const s = await start({ sessionDir: join(dir, "sessions"), sessionFile: file });
    expect(customs(s.session, ENTRY_REQUEST)).toHaveLength(2);
    expect(await details(s)).toContain(`retained estimate ${rate(scaledRate, "tokens")} tok/s`);
    expect(await details(s)).toContain(`EFF TPS ${rate(scaledRate, "tokens")} tok/s (last)`);

    await s.session.navigateTree(firstRunFinalId);
    const afterNav = await details(s);
    expect(afterNav).toContain(`retained estimate ${rate(firstRate, "tokens")} tok/s`);
    expect(afterNav).toContain(`EFF TPS ${rate(firstRate, "tokens")} tok/s (last)`);
    expect(afterNav).toContain("(covered 1/1)");
  });

  it("accepts bridged child snapshots and Translator receipts without touching native totals", async () => {
    const s = await start();
    s.faux.setResponses([fauxAssistantMessage("parent answer")]);
    await s.session.prompt("parent");
    const nativeBefore = s.session.getSessionStats().tokens;
    const sm = s.session.sessionManager;
    const anchorId = sm.getLeafId() as string;

    // A child SDK session instrumented with the bridge, forwarding over the parent's bus.
    const emitted: unknown[] = [];
    const child = await startSdkSession({
      extensions: [],
      tokensPerSecond: TPS,
      responses: [slow(ANSWER)],
      extensionFactories: [
        createAgentMetricsBridge({
          source: "test-dispatcher",
          agentId: "child-1",
          sessionId: sm.getSessionId(),
          anchorId,
          toolCallId: null,
          emit: (snap) => {
            emitted.push(snap);
            s.eventBus.emit(AGENT_EVENT, snap);
          },
        }),
      ],
    });
    open.push(child);
    await child.prompt("child work");
    expect(emitted.map((e: any) => e.state)).toEqual(["running", "running", "complete"]);
    const saved = customs(s.session, ENTRY_AGENT);
    expect(saved).toHaveLength(3);
    const final = saved.at(-1).snapshot;
    expect(final.ttftMs).toBeGreaterThanOrEqual(WAIT_MS);
    expect(final.ttftMs).toBeLessThanOrEqual(final.responseMs);
    expect(final.outputTokens).toBe(200);
    // Replays are ignored; an altered revision is rejected.
    s.eventBus.emit(AGENT_EVENT, final);
    s.eventBus.emit(AGENT_EVENT, { ...final, outputTokens: 7 });
    s.eventBus.emit(AGENT_EVENT, { ...final, sequence: 9, text: "payload" });
    expect(customs(s.session, ENTRY_AGENT)).toHaveLength(3);

    // A compatible Translator receipt, written by another extension into this session.
    sm.appendCustomEntry(ENTRY_RECEIPT, {
      version: 1,
      requestId: "tr-1",
      provider: "openai",
      model: "gpt-x",
      usage: { input: 1000, output: 500, cacheRead: 0, cacheWrite: 0, totalTokens: 1500, cost: { input: 0.1, output: 0.2, cacheRead: 0, cacheWrite: 0, total: 0.3 } },
      status: "ok",
      direction: "output",
      nativeAccounting: false,
    });
    s.notes.length = 0;
    await s.session.prompt("/metrics");
    const summary = s.notes.join("\n");
    expect(summary).toContain("attempts 1 · reported 1 · unreported 0");
    expect(summary).toMatch(/test-dispatcher\/child-1: EFF TPS \d+\.\d tok\/s \(covered 1\/1\)/);
    expect(summary).toContain("rejected snapshots: conflicting_revision 1, unknown_field 1");
    expect(s.session.getSessionStats().tokens).toEqual(nativeBefore);
    const native = summary.split("\n").find((l) => l.startsWith("  input "));
    expect(native).toContain(`input ${nativeBefore.input}`);
  });

  it("copies subagent details usage as a breakdown and accepts details.piMetrics for the tool's own call", async () => {
    const s = await start({}, [SUBAGENT_TOOL]);
    s.faux.setResponses([fauxAssistantMessage([fauxToolCall("subagent", { task: "look around" })], { stopReason: "toolUse" }), fauxAssistantMessage("done")]);
    await s.session.prompt("delegate");
    const [delegation] = customs(s.session, ENTRY_DELEGATION);
    expect(delegation).toMatchObject({ mode: "parallel", toolName: "subagent" });
    expect(delegation.results.map((r: any) => [r.slot, r.agent, r.input, r.output, r.turns])).toEqual([
      [0, "scout", 11, 22, 1],
      [1, "worker", 33, 44, 2],
    ]);
    const toolResult = s.session.sessionManager.getEntries().find((e) => e.type === "message" && e.message.role === "toolResult");
    expect(delegation.toolResultEntryId).toBe(toolResult?.id);
    // One activity across the tool round: two requests, one tool, TTFT fixed by the first request's first delta.
    const run = customs(s.session, ENTRY_RUN).at(-1);
    expect(run).toMatchObject({ phase: "final", state: "settled", requestCount: 2, coveredRequests: 2, toolCount: 1, listsComplete: true });
    const reqs = customs(s.session, ENTRY_REQUEST);
    expect(reqs[0].firstToolArgsMs).not.toBeNull();
    expect(run.ttftMs).toBeLessThanOrEqual(run.firstToolArgsMs);
    expect(run.firstTextMs).toBeGreaterThan(run.firstToolArgsMs);
    const agents = customs(s.session, ENTRY_AGENT);
    expect(agents).toHaveLength(1); // seen at tool_execution_end and again at turn_end: saved once
    expect(agents[0]).toMatchObject({ via: "details", snapshot: { source: "test-subagent", outputTokens: 100 } });
    const dump = JSON.stringify(s.session.sessionManager.getEntries().filter((e) => e.type === "custom"));
    expect(dump).not.toContain("PLANTED");
    s.notes.length = 0;
    await s.session.prompt("/metrics");
    const summary = s.notes.join("\n");
    expect(summary).toContain("usage-only subagent (parallel, 2 results; breakdown only, no timing)");
    expect(summary).toMatch(/test-subagent\/child-\S+: EFF TPS 100\.0 tok\/s \(covered 1\/1\)/);
    const stats = s.session.getSessionStats().tokens;
    expect(summary).toContain(`input ${stats.input} · output ${stats.output}`); // details usage never added to native totals
  });

  it("a failing session store is reported through Pi's error handler and a status, and the run still completes", async () => {
    const s = await start();
    const sm = s.session.sessionManager;
    const original = sm.appendCustomEntry.bind(sm);
    let failing = true;
    sm.appendCustomEntry = ((customType: string, data?: unknown) => {
      if (failing && customType.startsWith("orbit.pi-metrics")) throw new Error("disk full");
      return original(customType, data);
    }) as typeof sm.appendCustomEntry;
    s.faux.setResponses([fauxAssistantMessage("still answered")]);
    await s.session.prompt("go");
    expect(s.session.getLastAssistantText()).toBe("still answered");
    expect(s.extensionErrors.length).toBeGreaterThan(0);
    expect(s.extensionErrors[0]?.error).toContain("pi-metrics: session save failed: disk full");
    expect(s.statuses.get("pi-metrics")).toContain("metrics save failed");
    expect(customs(s.session, ENTRY_REQUEST)).toHaveLength(0);
    // Once saving works again, finalized records are written again (samples stay off until the next restore).
    failing = false;
    s.faux.setResponses([fauxAssistantMessage("recovered")]);
    await s.session.prompt("again");
    expect(customs(s.session, ENTRY_REQUEST)).toHaveLength(1);
    expect(customs(s.session, ENTRY_REQUEST)[0].samplesComplete).toBe(false);
  });
});
