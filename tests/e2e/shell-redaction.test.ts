/**
 * Secrets in shell output, in real Pi: what the model receives of an `exec_command` (its next request's transcript)
 * and the structured result the transcript band draws carry `[redacted:NAME]` and `redactions`, never the value;
 * a second read with `write_stdin` is redacted too. The log file keeps the raw bytes.
 */
import { fauxAssistantMessage, fauxToolCall, type FauxResponseFactory } from "@earendil-works/pi-ai";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, test } from "vitest";
import { messageText } from "../fixtures/faux-provider.ts";
import { startSdkSession, type SdkSession } from "./harness/sdk.ts";

const SECRET = "s3cr3t-Qe7Lw2Xc5Vb8-y";
const NAME = "MY_DEPLOY_TOKEN";
let sdk: SdkSession | undefined;
const saved = process.env[NAME];

afterEach(async () => {
  await sdk?.dispose();
  sdk = undefined;
  if (saved === undefined) delete process.env[NAME];
  else process.env[NAME] = saved;
});

function call(name: string, args: Record<string, unknown>): FauxResponseFactory {
  return () => fauxAssistantMessage([fauxToolCall(name, args as Parameters<typeof fauxToolCall>[1])], { stopReason: "toolUse" });
}

type ToolEnd = { toolName: string; result: { content: { text?: string }[]; details: any } };

describe("shell output with a secret in real Pi", () => {
  test("the model and the transcript see the marker and the count; the log keeps the value", async () => {
    // Pi's environment, which the job inherits (the pool's threads copy it when they start, after this).
    process.env[NAME] = SECRET;
    sdk = await startSdkSession({
      responses: [
        call("exec_command", { cmd: `echo "deploying with $${NAME}"; sleep 0.5; echo "again: $${NAME}"; sleep 30`, yield_time_ms: 250 }),
        call("write_stdin", { session_id: 1, yield_time_ms: 2000 }),
        call("kill_session", { session_id: 1 }),
        () => fauxAssistantMessage("done"),
      ],
    });
    await sdk.prompt("deploy");
    const ends = sdk.eventsOf("tool_execution_end") as unknown as ToolEnd[];
    const shell = ends.filter((end) => end.toolName === "exec_command" || end.toolName === "write_stdin");
    expect(shell).toHaveLength(2);
    const shown = shell.map((end) => end.result.details.output as string).join("");
    expect(shown).toContain(`deploying with [redacted:${NAME}]`);
    expect(shown).toContain(`again: [redacted:${NAME}]`);
    const counted = shell.reduce((sum, end) => sum + (end.result.details.redactions ?? 0), 0);
    expect(counted).toBe(2);
    for (const end of shell) if (end.result.details.redactions) expect(end.result.content.map((c) => c.text ?? "").join(""), JSON.stringify(end.result.content)).toMatch(new RegExp(`redactions: ${end.result.details.redactions}\\)`));
    // Nothing the model was sent holds the value.
    const sent = sdk.requests.flatMap((request) => request.messages.map((message) => messageText(message))).join("\n");
    expect(sent).toContain(`[redacted:${NAME}]`);
    expect(sent).not.toContain(SECRET);
    expect(JSON.stringify(ends)).not.toContain(SECRET);
    expect(readFileSync(shell[0]!.result.details.log_path as string, "utf8")).toContain(`deploying with ${SECRET}`);
  });
});
