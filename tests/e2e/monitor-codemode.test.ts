/**
 * Monitors from Pi's built-in codemode, in real Pi: one script starts eight monitors with Promise.all and reads the
 * structured result of each (`tools.monitor_start` resolves to its structuredContent). Nested calls wait inside
 * the tool even in a UI session, so no wake message follows. The script is the spec's eight-job recipe; the second
 * run makes all eight commands fail and checks that every failure reaches the model with its diagnostics.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSdkSession, type SdkSession } from "./harness/sdk.ts";
import { customMessages, textOf, toolEnds } from "./harness/transcript.ts";
import { answer, callTools } from "./harness/turns.ts";

let sdk: SdkSession;

beforeAll(async () => {
  // A UI session: top-level monitor-only batches would be asynchronous here, nested ones must not be.
  sdk = await startSdkSession({ mode: "rpc", codemode: true });
});

afterAll(async () => {
  await sdk?.dispose();
});

/** The spec's recipe; `command(i)` is the i-th job's command. */
function recipe(command: string): string {
  return `const jobs = await Promise.all(Array.from({ length: 8 }, (_, i) =>
  tools.monitor_start({
    command: ${command},
    result_pattern: "^DONE (?<json>.*)$",
    completion: "exit", compact: true, timeout_ms: 15000,
  })
));
text(jobs.map(job => {
  const result = job.result;
  const valid = job.status === "success" && !result.resultParseError &&
    !result.capturesTruncated && !result.outputTruncated;
  return valid
    ? { status: job.status, result: result.result }
    : { monitorId: job.monitorId, status: job.status, result };
}));`;
}

/** Runs one codemode script and returns the JSON value it printed, as the model received it. */
async function runScript(code: string): Promise<{ value: unknown; text: string }> {
  const mark = sdk.events.length;
  const requestMark = sdk.requests.length;
  sdk.script(callTools({ name: "codemode", arguments: { code } }), answer("read the jobs"));
  await sdk.prompt("run the batch");
  const end = toolEnds(sdk.since(mark), "codemode")[0];
  expect(end?.isError).toBe(false);
  const seen = sdk.requests[requestMark + 1]?.messages.filter((message) => (message as { role: string }).role === "toolResult").at(-1);
  const text = textOf(seen as { content?: unknown });
  expect(text).toMatch(/^Script completed/);
  const json = text.slice(text.indexOf("Output:\n") + "Output:\n".length);
  return { value: JSON.parse(json) as unknown, text };
}

describe("codemode batches of monitors", () => {
  it("eight jobs with Promise.all: every full JSON payload comes back through result.result", async () => {
    const mark = sdk.events.length;
    const command = '`printf \'DONE {"value":"%s","job":${i}}\\n\' "$(head -c 512 /dev/zero | tr \'\\\\0\' a)"`';
    const { value } = await runScript(recipe(command));
    expect(value).toEqual(Array.from({ length: 8 }, (_, job) => ({ status: "success", result: { value: "a".repeat(512), job } })));

    // Eight nested calls, each answered directly (no acknowledgement, no terminate), and no wake afterwards.
    const nested = toolEnds(sdk.since(mark));
    expect(nested).toHaveLength(8);
    for (const end of nested) {
      expect(end.toolCallId).toContain("/");
      expect(end.result).not.toHaveProperty("terminate");
      expect((end.result as { structuredContent: { status: string } }).structuredContent.status).toBe("success");
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(customMessages(sdk.events, "pi-jobs.monitor")).toEqual([]);
    expect(sdk.settledCount()).toBe(1);
  });

  it("eight failing commands: all eight failures reach the model with their diagnostics", async () => {
    const command = "`echo \"step ${i} started\"; echo \"error: job ${i} broke\" >&2; exit ${10 + i}`";
    const { value, text } = await runScript(recipe(command));
    const jobs = value as { monitorId: string; status: string; result: { exitCode: number; reason: unknown; output: { source: string; text: string }[] } }[];
    expect(jobs).toHaveLength(8);
    jobs.forEach((job, i) => {
      expect(job.status).toBe("failure");
      expect(job.monitorId).toMatch(/^monitor_\d+$/);
      expect(job.result.exitCode).toBe(10 + i);
      expect(job.result.output).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ source: "stdout", text: `step ${i} started` }),
          expect.objectContaining({ source: "stderr", text: `error: job ${i} broke` }),
        ]),
      );
    });
    expect(new Set(jobs.map((job) => job.monitorId)).size).toBe(8);
    expect(text).toContain("error: job 7 broke");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(customMessages(sdk.events, "pi-jobs.monitor")).toEqual([]);
  });

  it("both tools declare their output schemas: codemode scripts see typed results", async () => {
    const { value } = await runScript(`text({ start: await describeTool("monitor_start"), stop: await describeTool("monitor_stop") });`);
    const { start, stop } = value as { start: string; stop: string };
    // Codemode writes a tool's declared output type into the script API only when the tool has an outputSchema.
    expect(start).toContain('Promise<{ description: string; monitorId: string; status: "running"; } | { description: string; monitorId: string; result: {');
    expect(start).toMatch(/resultParseError: string \| null;[\s\S]*status: "success" \| "failure" \| "result_missing" \| "timeout" \| "stopped";/);
    expect(stop).toMatch(/Promise<\{[\s\S]*stopped: number;[\s\S]*\}>/);
  });

  it("a codemode script can read a terminal status from structured data without parsing report text", async () => {
    const { value } = await runScript(`const job = await tools.monitor_start({ command: "exit 0", result_pattern: "^NEVER$" });
text({ keys: Object.keys(job).sort(), status: job.status, exit: job.result.exitCode, missing: job.result.status });`);
    expect(value).toEqual({ keys: ["description", "monitorId", "result", "status"], status: "result_missing", exit: 0, missing: "result_missing" });
  });
});
