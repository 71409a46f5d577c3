/**
 * What the model is told when its monitor call is wrong, in real Pi: Pi turns an exception thrown by the tool's
 * `prepareArguments` into the call's error result, verbatim, so every message names the field it is about — and
 * no process starts. Also the boundaries that are valid, and a call cancelled before it executes.
 */
import type { JsonObject } from "@earendil-works/pi-ai";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CANCEL_MARKER } from "../fixtures/monitor-abort.ts";
import { PI_JOBS_ENTRY, REPO_ROOT } from "./harness/paths.ts";
import { startSdkSession, type SdkSession } from "./harness/sdk.ts";
import { textOf, toolEnds } from "./harness/transcript.ts";
import { answer, callTools, monitorCall } from "./harness/turns.ts";

let sdk: SdkSession;

beforeAll(async () => {
  // No UI host: valid calls answer with their report directly, so no wake can outlive its test.
  sdk = await startSdkSession({ extensions: [PI_JOBS_ENTRY, join(REPO_ROOT, "tests", "fixtures", "monitor-abort.ts")] });
});

afterAll(async () => {
  await sdk?.dispose();
});

/** The model makes one call; returns what it was told, as its next request carried it. */
async function call(name: string, args: JsonObject): Promise<{ text: string; isError: boolean }> {
  const mark = sdk.events.length;
  const requestMark = sdk.requests.length;
  sdk.script(callTools({ name, arguments: args }), answer("understood"));
  await sdk.prompt("try it");
  const end = toolEnds(sdk.since(mark), name)[0];
  const seen = sdk.requests[requestMark + 1]?.messages.filter((message) => (message as { role: string }).role === "toolResult").at(-1);
  return { text: textOf(seen as { content?: unknown }), isError: end?.isError ?? false };
}

/** A command that leaves a trace if it ever runs. */
function traced(name: string): string {
  return `touch ${name}; echo DONE`;
}

const rejected: [string, JsonObject, string][] = [
  ["a result_pattern that does not compile", { result_pattern: "(unclosed" }, "monitor_start: result_pattern: Invalid regular expression: /(unclosed/: Unterminated group"],
  ["a failure_pattern that does not compile", { result_pattern: "^DONE$", failure_pattern: "[z-a]" }, "monitor_start: failure_pattern: Invalid regular expression: /[z-a]/: Range out of order in character class"],
  ["timeout_ms of 0", { result_pattern: "^DONE$", timeout_ms: 0 }, "monitor_start: timeout_ms: expected an integer from 1 to 2147483647"],
  ["timeout_ms over the maximum", { result_pattern: "^DONE$", timeout_ms: 2_147_483_648 }, "monitor_start: timeout_ms: expected an integer from 1 to 2147483647"],
  ["a fractional timeout_ms", { result_pattern: "^DONE$", timeout_ms: 1.5 }, "monitor_start: timeout_ms: expected an integer from 1 to 2147483647"],
  ["an unknown field", { result_pattern: "^DONE$", timeout: 5000 }, 'monitor_start: unknown field "timeout"'],
  ["an unknown completion", { result_pattern: "^DONE$", completion: "eventually" }, 'monitor_start: completion: expected "match" or "exit"'],
  ["a missing result_pattern", {}, "monitor_start: result_pattern: required"],
];

describe("invalid monitor_start calls are rejected with a message naming the field, and start nothing", () => {
  for (const [what, args, message] of rejected) {
    it(what, async () => {
      const marker = `ran-${what.replaceAll(" ", "-")}`;
      const seen = await call("monitor_start", { command: traced(marker), ...args });
      expect(seen).toEqual({ text: message, isError: true });
      expect(existsSync(join(sdk.cwd, marker))).toBe(false);
    });
  }

  it("an empty command", async () => {
    expect(await call("monitor_start", { command: "  ", result_pattern: "^DONE$" })).toEqual({
      text: "monitor_start: command: must not be empty",
      isError: true,
    });
  });

  it("monitor_stop with an unknown field", async () => {
    expect(await call("monitor_stop", { id: "monitor_1" })).toEqual({ text: 'monitor_stop: unknown field "id"', isError: true });
  });
});

describe("valid boundaries", () => {
  it("timeout_ms 1 is accepted and times out", async () => {
    const seen = await call("monitor_start", { command: "sleep 5", description: "tiny", result_pattern: "^DONE$", timeout_ms: 1 });
    expect(seen.isError).toBe(false);
    expect(seen.text).toMatch(/^Monitor: tiny\n[\s\S]*\nstatus=timeout\n[\s\S]*\ntimeout_ms=1\n/);
  });

  // The supervisor's backstop sits past this deadline, beyond Node's 2^31-1 ms timer limit: it must not fire early.
  it("timeout_ms 2147483647 is accepted", async () => {
    const seen = await call("monitor_start", { command: "echo DONE", description: "max", result_pattern: "^DONE$", timeout_ms: 2_147_483_647 });
    expect(seen).toMatchObject({ isError: false, text: expect.stringMatching(/^Monitor: max\n[\s\S]*\nstatus=success\n/) });
  });

  it("null for an optional field counts as omitted", async () => {
    const seen = await call("monitor_start", {
      command: "echo DONE",
      result_pattern: "^DONE$",
      description: null,
      failure_pattern: null,
      completion: null,
      timeout_ms: null,
      compact: null,
    });
    expect(seen).toMatchObject({ isError: false, text: expect.stringMatching(/^Monitor: echo DONE\n[\s\S]*\nstatus=success\n/) });
  });
});

describe("cancellation", () => {
  it("a call cancelled before execution starts no process", async () => {
    const mark = sdk.events.length;
    sdk.script(callTools(monitorCall({ command: `${traced("cancelled-ran")} ${CANCEL_MARKER}`, result_pattern: "^DONE$" })));
    await sdk.prompt("start, then cancel");
    const end = toolEnds(sdk.since(mark))[0];
    expect(end?.isError).toBe(true);
    expect(textOf(end?.result as { content: unknown })).toMatch(/abort/i);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(existsSync(join(sdk.cwd, "cancelled-ran"))).toBe(false);
  });
});
