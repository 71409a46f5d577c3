/**
 * wait_jobs in real Pi (SDK, scripted model, the product's own entry): a turn starts four jobs and collects them with
 * one wait_jobs call, and the session holds exactly one result per job and no wake; Esc (an abort of the run) during
 * the wait ends it at once while the jobs finish and wake as they asked; a codemode script starts eight jobs and
 * awaits wait_jobs, and its receipt lists all eight.
 */
import { afterEach, describe, expect, test } from "vitest";
import { startSdkSession, wakeMessages, type SdkSession } from "./harness/sdk.ts";
import { answer, callTools, type Call } from "./harness/turns.ts";
import { pollUntil } from "./harness/wait.ts";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.allSettled(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function start(options: Parameters<typeof startSdkSession>[0]): Promise<SdkSession> {
  const sdk = await startSdkSession(options);
  cleanups.push(() => sdk.dispose());
  return sdk;
}

/** Sleeps, then prints `<word>-done` without the command containing it. */
const say = (seconds: number, word: string): string => `sleep ${seconds}; printf '%s-%s\\n' ${word} done`;
const exec = (cmd: string): Call => ({ name: "exec_command", arguments: { cmd, on_exit: "wake", yield_time_ms: 250 } });
type ToolEnd = { toolName: string; isError: boolean; result: { content: { text?: string }[]; details: any } };
const ends = (sdk: SdkSession, name: string) => (sdk.eventsOf("tool_execution_end") as unknown as ToolEnd[]).filter((e) => e.toolName === name);
const toolResults = (sdk: SdkSession) =>
  sdk.eventsOf("message_end").map((e) => e.message as unknown as { role: string; toolName?: string }).filter((m) => m.role === "toolResult");

describe("wait_jobs in Pi", () => {
  test("one call collects four jobs: one result per job, and no wake", async () => {
    const sdk = await start({
      responses: [
        // Each job outlives the turn that starts them by seconds, so none can end (and wake) before the wait claims it.
        callTools(exec(say(3, "alpha")), exec(say(3.5, "beta")), exec(`${say(2.8, "gamma")} >&2; exit 4`), exec(say(4, "delta"))),
        callTools({ name: "wait_jobs", arguments: {} }),
        answer("collected"),
      ],
    });
    await sdk.prompt("run the four checks");
    const [wait] = ends(sdk, "wait_jobs");
    expect(wait?.isError).toBe(false);
    const details = wait!.result.details;
    expect(details.wait_status).toBe("all_ended");
    expect(details.jobs.map((j: { id: string }) => j.id).sort()).toEqual(["job_1", "job_2", "job_3", "job_4"]);
    expect(details.jobs.every((j: { collected: string }) => j.collected === "now")).toBe(true);
    expect(details.summary).toMatch(/^4 jobs: 3 success, 1 failure \(job_3 exit 4\)/);
    const text = wait!.result.content.map((c) => c.text ?? "").join("");
    // Each job's output is in the answer once (the commands print words they do not contain).
    for (const word of ["alpha-done", "beta-done", "gamma-done", "delta-done"]) expect(text.split(word)).toHaveLength(2);
    // Four starts and one wait: five tool results, and no wake even after the batching window has long passed.
    expect(toolResults(sdk).map((m) => m.toolName)).toEqual(["exec_command", "exec_command", "exec_command", "exec_command", "wait_jobs"]);
    await new Promise((resolve) => setTimeout(resolve, 4000));
    expect(wakeMessages(sdk)).toEqual([]);
  });

  test("Esc during the wait ends it at once; the jobs still finish and wake", async () => {
    const sdk = await start({
      responses: [callTools(exec("sleep 4; echo one-done"), exec("sleep 4.5; echo two-done")), callTools({ name: "wait_jobs", arguments: { until: "all" } }), answer("woken")],
    });
    const run = sdk.prompt("start two jobs and wait");
    await sdk.waitFor((e) => e.type === "tool_execution_start" && (e as { toolName?: string }).toolName === "wait_jobs");
    await new Promise((resolve) => setTimeout(resolve, 200));
    await sdk.session.abort();
    await run;
    const [wait] = ends(sdk, "wait_jobs");
    // The abort ended the call while the jobs still ran: nothing was collected and no wake had come yet.
    expect(wait?.result.details).toMatchObject({ wait_status: "cancelled", running: ["job_1", "job_2"] });
    expect(wakeMessages(sdk)).toEqual([]);
    await pollUntil(() => wakeMessages(sdk).flatMap((w) => w.details.sessions).length >= 2, { timeoutMs: 30_000, what: "both wakes" });
    const woken = wakeMessages(sdk).flatMap((w) => w.details.sessions.map((s: { session_id: number }) => s.session_id));
    expect(woken.sort()).toEqual([1, 2]);
  });

  test("bad input is an error result naming the field, before anything waits", async () => {
    const sdk = await start({
      responses: [callTools({ name: "wait_jobs", arguments: { until: "soon" } }, { name: "wait_jobs", arguments: { ids: [7] } }), answer("noted")],
    });
    await sdk.prompt("wait for nothing");
    const results = ends(sdk, "wait_jobs").map((e) => ({ isError: e.isError, text: e.result.content.map((c) => c.text ?? "").join("") }));
    expect(results).toEqual([
      { isError: true, text: expect.stringContaining('wait_jobs: until: "soon" is not one of all, any, first_failure') },
      { isError: true, text: expect.stringContaining("wait_jobs: ids: job_7 is not a job of this session; its jobs: none") },
    ]);
  });

  test("codemode: a script starts eight jobs and awaits wait_jobs; its receipt lists all eight", async () => {
    const script = `const started = await Promise.all(Array.from({ length: 8 }, (_, i) =>
  tools.exec_command({ cmd: "sleep " + (0.3 + i * 0.15) + "; echo job-" + i + "-done", yield_time_ms: 250 })));
const done = await tools.wait_jobs({ ids: started.map((s) => String(s.session_id)) });
text(JSON.stringify({ status: done.wait_status, ids: done.jobs.map((j) => j.id), collected: done.jobs.map((j) => j.collected), summary: done.summary }));`;
    const sdk = await start({ mode: "rpc", codemode: true, responses: [callTools({ name: "codemode", arguments: { code: script } }), answer("done")] });
    await sdk.prompt("run the batch");
    const [run] = ends(sdk, "codemode");
    expect(run?.isError).toBe(false);
    const text = run!.result.content.map((c) => c.text ?? "").join("\n");
    const value = JSON.parse(/\{"status".*\}/.exec(text)![0]);
    expect(value.status).toBe("all_ended");
    expect(value.ids).toHaveLength(8);
    expect(value.collected.every((c: string) => c === "now")).toBe(true);
    expect(value.summary).toMatch(/^8 jobs: 8 success, 0 failure/);
    // The receipt: every session the script touched, collected in it, its read replayable once.
    const receipt = text.slice(text.indexOf("[shell-jobs results]"));
    for (let id = 1; id <= 8; id += 1) expect(receipt).toMatch(new RegExp(`- session_id ${id}: exited with code 0 · final output replayable once`));
  });
});
