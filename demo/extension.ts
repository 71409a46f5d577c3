/**
 * The offline demo's provider: a clearly labelled scripted model (`pi-jobs-demo/scripted-tour`) whose every answer
 * comes from the tour. Loaded by `npm start` only when no model credentials are set up; never part of the product's
 * entry point.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { fauxAssistantMessage, fauxProvider, fauxText, fauxToolCall, type FauxResponseFactory } from "@earendil-works/pi-ai";
import { nextMove, type TourMessage } from "./tour.ts";

export const DEMO_PROVIDER = "pi-jobs-demo";
export const DEMO_MODEL = "scripted-tour";
/** Enough answers for any tour; each is decided when the request arrives. */
const ANSWERS = 500;

export default function demoProvider(pi: ExtensionAPI): void {
  const faux = fauxProvider({
    provider: DEMO_PROVIDER,
    models: [{ id: DEMO_MODEL, name: "pi-jobs demo (scripted, offline)" }],
    tokensPerSecond: 400,
  });
  const answer: FauxResponseFactory = (context) => {
    const move = nextMove(context.messages as readonly TourMessage[]);
    const blocks = [fauxText(move.text), ...move.toolCalls.map((call) => fauxToolCall(call.name, call.arguments as Parameters<typeof fauxToolCall>[1]))];
    return fauxAssistantMessage(blocks, { stopReason: move.toolCalls.length > 0 ? "toolUse" : "stop" });
  };
  faux.setResponses(Array.from({ length: ANSWERS }, () => answer));
  pi.registerProvider(faux.provider);
}
