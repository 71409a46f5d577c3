/**
 * Monitors in Pi: the `monitor_start` and `monitor_stop` tools, the `/monitor` command, the prompt guidance and the
 * delivery of terminal results.
 *
 * Delivery follows the session. In TUI and RPC sessions a tool batch made only of `monitor_start` calls returns
 * acknowledgements with `terminate: true` (the turn ends; no polling), and each terminal result later wakes the agent
 * once as a steering custom message. A mixed batch, a nested call (codemode) or a session without a UI host (print,
 * JSON) waits inside the tool and returns the report directly, with no second message.
 */
import type { JsonValue } from "@earendil-works/pi-ai";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { Lifecycle } from "../lifecycle.ts";
import type { Parkable } from "../handover.ts";
import { buildAcknowledgement, runningResult, structuredResult } from "./report.ts";
import { buildGuidance } from "./guidance.ts";
import {
  MONITOR_START,
  MONITOR_START_DESCRIPTION,
  MONITOR_STOP,
  MONITOR_STOP_DESCRIPTION,
  MonitorStartOutput,
  MonitorStartParams,
  MonitorStopOutput,
  MonitorStopParams,
  validateMonitorStart,
  validateMonitorStop,
} from "./schemas.ts";
import { createMonitorService, MONITOR_MESSAGE_TYPE, type MonitorDetails, type MonitorService } from "./service.ts";

const PARK_KEY = "monitors";

interface ParkedMonitors extends Parkable {
  service: MonitorService;
}

export function installMonitors(pi: ExtensionAPI, lifecycle: Lifecycle): { service(): MonitorService } {
  let service: MonitorService | null = null;
  const current = (): MonitorService => (service ??= createMonitorService(() => lifecycle.runtime()));
  /** Tool call ids of the latest assistant message, and whether every call in it is monitor_start. */
  let batch: { ids: Set<string>; onlyMonitors: boolean } = { ids: new Set(), onlyMonitors: false };
  let live = false;

  const deliver = (delivery: { content: string; details: MonitorDetails }) => {
    if (!live) throw new Error("no live session to deliver to");
    pi.sendMessage<MonitorDetails>(
      { customType: MONITOR_MESSAGE_TYPE, content: delivery.content, display: true, details: delivery.details },
      { deliverAs: "steer", triggerTurn: true },
    );
  };

  lifecycle.onPark(PARK_KEY, () => {
    const parked = current();
    parked.bind(null);
    service = null;
    const state: ParkedMonitors = { service: parked, abandon: async () => void (await parked.stop(null)) };
    return state;
  });

  pi.on("session_start", () => {
    const adopted = lifecycle.adopted<ParkedMonitors>(PARK_KEY);
    if (adopted) service = adopted.service;
    live = true;
    current().bind(deliver);
  });

  pi.on("session_shutdown", (event) => {
    live = false;
    if (event.reason !== "reload") {
      // The runtime stops every job; nothing of this session may be delivered into the next one.
      current().bind(null);
      service = null;
    }
  });

  pi.on("message_end", (event) => {
    const message = event.message as { role?: string; content?: unknown };
    if (message.role !== "assistant" || !Array.isArray(message.content)) return;
    const calls = message.content.filter(
      (block): block is { type: "toolCall"; id: string; name: string } =>
        typeof block === "object" && block !== null && (block as { type?: string }).type === "toolCall",
    );
    batch = { ids: new Set(calls.map((call) => call.id)), onlyMonitors: calls.every((call) => call.name === MONITOR_START) };
  });

  pi.on("agent_settled", () => current().flush());
  pi.on("tool_execution_end", () => current().flush());

  pi.on("before_agent_start", (event, ctx) => {
    const guidance = buildGuidance(pi.getActiveTools(), hasMonitorResults(ctx));
    if (!guidance) return;
    return { systemPrompt: `${event.systemPrompt}\n\n${guidance}` };
  });

  const asyncDelivery = (toolCallId: string, ctx: ExtensionContext): boolean =>
    (ctx.mode === "tui" || ctx.mode === "rpc") && !toolCallId.includes("/") && batch.ids.has(toolCallId) && batch.onlyMonitors;

  pi.registerTool({
    name: MONITOR_START,
    label: "Monitor",
    description: MONITOR_START_DESCRIPTION,
    parameters: MonitorStartParams,
    outputSchema: MonitorStartOutput,
    prepareArguments(args) {
      const verdict = validateMonitorStart(args);
      if (!verdict.ok) throw new Error(`monitor_start: ${verdict.error}`);
      return args as MonitorStartParams;
    },
    async execute(toolCallId, params, signal, _onUpdate, ctx) {
      const verdict = validateMonitorStart(params);
      if (!verdict.ok) throw new Error(`monitor_start: ${verdict.error}`);
      // A call cancelled before it ran starts no process.
      if (signal?.aborted) throw new Error("monitor_start: cancelled before the monitor started");
      const request = verdict.value;
      const delivery = asyncDelivery(toolCallId, ctx) ? "async" : "direct";
      const record = current().start(request, { cwd: ctx.cwd, delivery });
      if (delivery === "async") {
        return {
          content: [{ type: "text", text: buildAcknowledgement(record.description, record.monitorId) }],
          details: { description: record.description, monitorId: record.monitorId, startConfiguration: request },
          structuredContent: runningResult(record.monitorId, record.description),
          terminate: true,
        };
      }
      const abort = () => void current().stop(record.monitorId);
      signal?.addEventListener("abort", abort, { once: true });
      try {
        const final = await current().settle(record);
        const structured = structuredResult(final.facts);
        return {
          content: [{ type: "text", text: final.report }],
          details: {
            description: record.description,
            monitorId: record.monitorId,
            result: structured.result,
            startConfiguration: request,
          },
          // Values are JSON by construction (the parsed `json` capture included); the schema types them as unknown.
          structuredContent: structured as unknown as JsonValue,
        };
      } finally {
        signal?.removeEventListener("abort", abort);
      }
    },
  });

  pi.registerTool({
    name: MONITOR_STOP,
    label: "Stop monitor",
    description: MONITOR_STOP_DESCRIPTION,
    parameters: MonitorStopParams,
    outputSchema: MonitorStopOutput,
    prepareArguments(args) {
      const verdict = validateMonitorStop(args);
      if (!verdict.ok) throw new Error(`monitor_stop: ${verdict.error}`);
      return (args ?? {}) as MonitorStopParams;
    },
    async execute(_toolCallId, params) {
      const verdict = validateMonitorStop(params);
      if (!verdict.ok) throw new Error(`monitor_stop: ${verdict.error}`);
      const target = verdict.value.monitorId;
      if (target !== null && !current().active().some((record) => record.monitorId === target)) {
        const known = current().history().some((record) => record.monitorId === target);
        throw new Error(`monitor_id: ${target} is ${known ? "already finished" : "not a monitor of this session"}`);
      }
      const stopped = await current().stop(target);
      return {
        content: [{ type: "text", text: `stopped=${stopped}` }],
        details: { stopped },
        structuredContent: { stopped },
      };
    },
  });

  pi.registerCommand("monitor", {
    description: "Show active and recent monitors",
    handler: async (_args, ctx) => {
      const lines = [
        ...current()
          .active()
          .map((record) => `running · ${record.description} · ${record.monitorId}`),
        ...current()
          .history()
          .map((record) => `${record.final?.facts.outcome.status ?? "ended"} · ${record.description} · ${record.monitorId}`),
      ];
      ctx.ui.notify(lines.length > 0 ? lines.join("\n") : "No monitors in this session.", "info");
    },
  });

  return { service: current };
}

/** Whether the session already holds monitor results (restored, or from earlier turns): they keep safety guidance. */
function hasMonitorResults(ctx: ExtensionContext): boolean {
  return ctx.sessionManager.getBranch().some((entry) => {
    const record = entry as { type: string; customType?: string; message?: { role?: string; toolName?: string } };
    if (record.type === "custom_message") return record.customType === MONITOR_MESSAGE_TYPE;
    return record.type === "message" && record.message?.role === "toolResult" && record.message.toolName === MONITOR_START;
  });
}
