/**
 * Turns for the scripted model, to queue with `SdkSession.script`: a batch of tool calls, or a closing answer.
 */
import { fauxAssistantMessage, fauxText, fauxToolCall, type FauxResponseFactory, type ToolCall } from "@earendil-works/pi-ai";

export interface Call {
  name: string;
  arguments: ToolCall["arguments"];
  id?: string;
}

/** The model calls these tools, all in one assistant message (one tool batch). */
export function callTools(...calls: Call[]): FauxResponseFactory {
  return () =>
    fauxAssistantMessage(
      calls.map((call) => fauxToolCall(call.name, call.arguments, call.id === undefined ? {} : { id: call.id })),
      { stopReason: "toolUse" },
    );
}

export function monitorCall(args: Record<string, unknown>, id?: string): Call {
  return { name: "monitor_start", arguments: args as ToolCall["arguments"], ...(id === undefined ? {} : { id }) };
}

/** The model answers with text and ends its run. */
export function answer(text = "ok"): FauxResponseFactory {
  return () => fauxAssistantMessage([fauxText(text)], { stopReason: "stop" });
}

/** The model calls one tool with these arguments. */
export function call(name: string, args: Record<string, unknown>): FauxResponseFactory {
  return callTools({ name, arguments: args as ToolCall["arguments"] });
}

/** What a tool answered, as the session recorded its end. */
export type ToolEnd = { toolName: string; isError: boolean; result: { content: { text?: string }[]; details: any } };

/** Every tool's end the session recorded, in order. */
export const ends = (sdk: { eventsOf(type: "tool_execution_end"): unknown[] }): ToolEnd[] => sdk.eventsOf("tool_execution_end") as ToolEnd[];
