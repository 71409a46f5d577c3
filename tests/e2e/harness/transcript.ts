/**
 * Reading what happened in an SDK session: the text of a message, the system prompt a request carried, the tool
 * results and the custom messages among the recorded events.
 */
import type { Message } from "@earendil-works/pi-ai";
import type { AgentSessionEvent } from "@earendil-works/pi-coding-agent";
import type { ModelRequest } from "./sdk.ts";

/** Plain text of a message's content, whatever its role. */
export function textOf(message: { content?: unknown } | undefined): string {
  const content = message?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((block: { type?: string; text?: string }) => (block.type === "text" ? (block.text ?? "") : "")).join("");
}

/** The system prompt text a request carried: every system message's content and sections. */
export function systemTextOf(request: ModelRequest): string {
  return request.messages
    .filter((message) => (message as { role: string }).role === "system")
    .map((message) => {
      const system = message as unknown as { content: unknown; sections?: Record<string, string | null> };
      return [textOf(system), ...Object.values(system.sections ?? {}).filter((s): s is string => typeof s === "string")].join("\n");
    })
    .join("\n");
}

type ToolEnd = Extract<AgentSessionEvent, { type: "tool_execution_end" }>;

export function toolEnds(events: readonly AgentSessionEvent[], name = "monitor_start"): ToolEnd[] {
  return events.filter((event): event is ToolEnd => event.type === "tool_execution_end" && event.toolName === name);
}

/** Custom messages the session recorded (message_end of role "custom"), optionally of one type. */
export function customMessages(events: readonly AgentSessionEvent[], customType?: string): { content: unknown; details: unknown; customType: string }[] {
  return events
    .filter((event) => event.type === "message_end")
    .map((event) => (event as { message: { role: string } }).message)
    .filter((message): message is Message & { role: "custom" } => (message as { role: string }).role === "custom")
    .map((message) => message as unknown as { content: unknown; details: unknown; customType: string })
    .filter((message) => customType === undefined || message.customType === customType);
}
