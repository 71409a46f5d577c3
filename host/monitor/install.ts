/**
 * Monitors in Pi: the `monitor_start` and `monitor_stop` tools, the prompt guidance and the delivery of terminal
 * results. The `/monitor` console is the console's (host/console/), which reads the service this returns.
 *
 * Delivery follows the session. In TUI and RPC sessions a tool batch made only of valid `monitor_start` calls
 * returns acknowledgements with `terminate: true` (the turn ends; no polling), and each terminal result later wakes
 * the agent once as a steering custom message. A mixed batch, a nested call (codemode), or a session without a UI
 * host (print, JSON) waits inside the tool and returns the report directly, with no second message. A batch with
 * an invalid `monitor_start` counts as mixed: Pi ends a turn only when every result of the batch asks for it, and
 * an error result does not, so acknowledging the valid calls would leave the model running while they are pending.
 */
import type { JsonValue } from "@earendil-works/pi-ai";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { InstanceLife } from "../session/instance-life.ts";
import type { Parkable } from "../session/handover.ts";
import { buildAcknowledgement, runningResult, structuredResult } from "./report.ts";
import { buildGuidance } from "./guidance.ts";
import {
  MONITOR_START,
  MONITOR_START_TOOL,
  MONITOR_STOP,
  MONITOR_STOP_TOOL,
  validateMonitorStart,
  validateMonitorStop,
  type MonitorStartParams,
  type MonitorStopParams,
} from "./schemas.ts";
import { ToolError, type Checked } from "../tools/checked.ts";
import { createMonitorService, type MonitorHost, type MonitorService } from "./service.ts";
import type { Delivery } from "../delivery/install.ts";
import { MONITOR_MESSAGE_TYPE } from "../delivery/wake-text.ts";

const PARK_KEY = "monitors";

interface ParkedMonitors extends Parkable {
  service: MonitorService;
}

/** The tool calls of the latest assistant message, and whether they may be acknowledged and end the turn. */
interface Batch {
  ids: ReadonlySet<string>;
  onlyValidMonitors: boolean;
}

export function installMonitors(pi: ExtensionAPI, life: InstanceLife, delivery: Delivery): { service(): MonitorService } {
  let service: MonitorService | null = null;
  const current = (): MonitorService => (service ??= createMonitorService(delivery.ledger()));
  let batch: Batch = { ids: new Set(), onlyValidMonitors: false };

  const host: MonitorHost = {
    // Read at each start, so a service adopted after /reload runs its new monitors on this instance's runtime.
    runtime: () => life.runtime(),
    due: () => delivery.scheduler.schedule(),
  };

  life.onPark(PARK_KEY, () => {
    const parked = current();
    parked.bind(null);
    service = null;
    const state: ParkedMonitors = { service: parked, abandon: async () => void (await parked.stop(null, "session_shutdown")) };
    return state;
  });

  pi.on("session_start", () => {
    const adopted = life.adopted<ParkedMonitors>(PARK_KEY);
    if (adopted) service = adopted.service;
    current().bind(host);
  });

  pi.on("session_shutdown", () => {
    // The instance's life already parked the service (reload) or stopped every monitor without delivery (any other end);
    // whatever this instance still holds must not reach the next session through it.
    service?.bind(null);
    service = null;
  });

  pi.on("message_end", (event) => {
    const message = event.message as { role?: string; content?: unknown };
    if (message.role !== "assistant" || !Array.isArray(message.content)) return;
    const calls = message.content.filter(
      (block): block is { type: "toolCall"; id: string; name: string; arguments: unknown } =>
        typeof block === "object" && block !== null && (block as { type?: string }).type === "toolCall",
    );
    batch = {
      ids: new Set(calls.map((call) => call.id)),
      onlyValidMonitors: calls.every((call) => call.name === MONITOR_START && validateMonitorStart(call.arguments).ok),
    };
  });

  pi.on("before_agent_start", (event, ctx) => {
    const guidance = buildGuidance(pi.getActiveTools(), hasMonitorResults(ctx));
    if (!guidance) return;
    return { systemPrompt: `${event.systemPrompt}\n\n${guidance}` };
  });

  // Nested calls (codemode, another tool's executeTool) carry `<parent>/<n>` ids and are never in the batch.
  const asyncDelivery = (toolCallId: string, ctx: ExtensionContext): boolean =>
    (ctx.mode === "tui" || ctx.mode === "rpc") && batch.onlyValidMonitors && batch.ids.has(toolCallId);

  pi.registerTool({
    ...MONITOR_START_TOOL,
    prepareArguments(args) {
      accepted(MONITOR_START, validateMonitorStart(args));
      return withoutNulls(args) as MonitorStartParams;
    },
    async execute(toolCallId, params, signal, _onUpdate, ctx) {
      const request = accepted(MONITOR_START, validateMonitorStart(params));
      // A call cancelled before it ran starts no process.
      if (signal?.aborted) throw new Error("monitor_start: cancelled before the monitor started");
      const monitors = current();
      const delivery = asyncDelivery(toolCallId, ctx) ? "async" : "direct";
      const record = monitors.start(request, { cwd: ctx.cwd, delivery });
      if (delivery === "async") {
        return {
          content: [{ type: "text", text: buildAcknowledgement(record.description, record.monitorId) }],
          details: { description: record.description, monitorId: record.monitorId, startConfiguration: request },
          structuredContent: runningResult(record.monitorId, record.description),
          terminate: true,
        };
      }
      // Cancelling a waiting call stops its monitor; the call still answers with the stopped result.
      const abort = () => void monitors.stop(record.monitorId);
      signal?.addEventListener("abort", abort, { once: true });
      try {
        const final = await monitors.settle(record);
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
    ...MONITOR_STOP_TOOL,
    prepareArguments(args) {
      accepted(MONITOR_STOP, validateMonitorStop(args));
      return (withoutNulls(args) ?? {}) as MonitorStopParams;
    },
    async execute(_toolCallId, params) {
      const target = accepted(MONITOR_STOP, validateMonitorStop(params)).monitorId;
      const monitors = current();
      if (target !== null && !monitors.active().some((record) => record.monitorId === target)) {
        const known = monitors.history().some((record) => record.monitorId === target);
        throw new Error(`monitor_stop: monitor_id: ${target} is ${known ? "already finished" : "not a monitor of this session"}`);
      }
      const stopped = await monitors.stop(target);
      return {
        content: [{ type: "text", text: `stopped=${stopped}` }],
        details: { stopped },
        structuredContent: { stopped },
      };
    },
  });

  return { service: current };
}

/** Models often send null for an omitted optional field; the validator reads it as omitted, and so must Pi's schema. */
/**
 * The request a verdict accepts. Pi turns an exception here into the call's error result, shown to the model as is:
 * so every message names the tool and the field it is about, and no process starts.
 */
function accepted<T>(tool: string, verdict: Checked<T>): T {
  if (!verdict.ok) throw new ToolError(`${tool}: ${verdict.error}`);
  return verdict.value;
}

function withoutNulls(args: unknown): unknown {
  if (typeof args !== "object" || args === null || Array.isArray(args)) return args;
  return Object.fromEntries(Object.entries(args).filter(([, value]) => value !== null));
}

// A compaction or branch summary that mentions monitors stands in for the monitor results it replaced.
const MONITOR_TRACE = /monitor_id=|monitor_start|\[monitor\]/;

/** Whether the session already holds monitor results (restored, summarised, or from earlier turns). */
function hasMonitorResults(ctx: ExtensionContext): boolean {
  return ctx.sessionManager.getBranch().some((entry) => {
    const record = entry as {
      type: string;
      customType?: string;
      summary?: string;
      message?: { role?: string; toolName?: string };
    };
    switch (record.type) {
      case "custom_message":
        return record.customType === MONITOR_MESSAGE_TYPE;
      case "message":
        return record.message?.role === "toolResult" && record.message.toolName === MONITOR_START;
      case "compaction":
      case "branch_summary":
        return typeof record.summary === "string" && MONITOR_TRACE.test(record.summary);
      default:
        return false;
    }
  });
}
