import { fauxAssistantMessage, fauxToolCall } from "@earendil-works/pi-ai";
import { expect, it } from "vitest";
import { startSdkSession } from "./harness/sdk.ts";

it("monitor_start returns the terminal report directly in a session without a UI host", async () => {
  let seen = "";
  const sdk = await startSdkSession({
    extensions: ["index.ts"],
    responses: [
      fauxAssistantMessage([fauxToolCall("monitor_start", { command: "echo hi; echo DONE", result_pattern: "^DONE$", completion: "exit" })], { stopReason: "toolUse" }),
      (context) => {
        const last = context.messages.at(-1) as { content: { text?: string }[] };
        seen = last.content.map((c) => c.text ?? "").join("");
        return fauxAssistantMessage("ok");
      },
    ],
  });
  try {
    await sdk.prompt("go");
    expect(seen).toMatch(/status=success/);
    console.log(seen);
  } finally {
    await sdk.dispose();
  }
});
