/**
 * /new, /resume and /fork in real Pi (an AgentSessionRuntime, as the CLI builds one: each switch shuts the session
 * down with its reason and loads the extensions afresh): a running job is carried into the next session, and
 * list_sessions, write_stdin, kill_session and its wake serve that session. Each job ends only when the test says so,
 * after the switch, so it is running across the switch however slow the machine is.
 */
import { fauxAssistantMessage, fauxToolCall, type FauxResponseFactory } from "@earendil-works/pi-ai";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, test } from "vitest";
import { messageText } from "../fixtures/faux-provider.ts";
import { pidAlive } from "../integration/helpers.ts";
import { wakeMessages } from "./harness/sdk.ts";
import { customMessages } from "./harness/transcript.ts";
import { startSwitchableSession, type SwitchableSession } from "./harness/sdk-switch.ts";
import { pollUntil } from "./harness/wait.ts";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.allSettled(cleanups.splice(0).map((cleanup) => cleanup()));
});

function call(name: string, args: Record<string, unknown>): FauxResponseFactory {
  return () => fauxAssistantMessage([fauxToolCall(name, args as Parameters<typeof fauxToolCall>[1])], { stopReason: "toolUse" });
}
const say = (text: string): FauxResponseFactory => () => fauxAssistantMessage(text);

/** A job that prints its pid into `dir/pid`, waits for `dir/go`, then prints "after". */
function gatedJob(): { dir: string; cmd: string; go: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "pi-jobs-switch-"));
  const cmd = `echo $$ > '${dir}/pid.tmp'; mv '${dir}/pid.tmp' '${dir}/pid'; echo before; while [ ! -e '${dir}/go' ]; do sleep 0.05; done; echo after`;
  return { dir, cmd, go: () => writeFileSync(join(dir, "go"), "") };
}

async function pidOf(dir: string): Promise<number> {
  const file = join(dir, "pid");
  return pollUntil(() => existsSync(file) && Number(readFileSync(file, "utf8").trim()), { what: "the job's pid" });
}

async function start(responses: FauxResponseFactory[]): Promise<SwitchableSession> {
  const sdk = await startSwitchableSession({ responses });
  cleanups.push(() => sdk.dispose());
  return sdk;
}

type ToolEnd = { toolName: string; isError: boolean; result: { details: any } };
const ends = (sdk: SwitchableSession): ToolEnd[] => sdk.eventsOf("tool_execution_end") as unknown as ToolEnd[];

/** The wake messages in the current session's transcript. */
function wakesInTranscript(sdk: SwitchableSession): string[] {
  return sdk.session.messages
    .filter((m) => (m as { customType?: string }).customType === "shell-jobs-wake")
    .map((m) => messageText(m as Parameters<typeof messageText>[0]));
}

describe("session switches keep jobs", () => {
  test("/new: the job runs on, is listed in the new session, and its wake comes there once, saying where it started", async () => {
    const job = gatedJob();
    const sdk = await start([
      call("exec_command", { cmd: job.cmd, on_exit: "wake", yield_time_ms: 250 }),
      say("started"),
      call("list_sessions", {}),
      say("listed"),
      (context) => fauxAssistantMessage(`woken: ${messageText(context.messages.at(-1))}`),
    ]);
    await sdk.prompt("start");
    const pid = await pidOf(job.dir);
    await sdk.runtime.newSession();
    expect(pidAlive(pid)).toBe(true);
    await sdk.prompt("list");
    const listed = ends(sdk).at(-1)!.result.details as { active_count: number; sessions: { session_id: number; running: boolean; earlier_session?: true }[] };
    expect(listed.active_count).toBe(1);
    expect(listed.sessions[0]).toMatchObject({ session_id: 1, running: true, earlier_session: true });
    job.go();
    await sdk.waitForSettled(3, 30_000);
    const wakes = wakeMessages(sdk);
    expect(wakes).toHaveLength(1);
    expect(wakes[0]!.details.sessions[0]).toMatchObject({ session_id: 1, status: "exited", exit_code: 0, earlier_session: true });
    expect(wakes[0]!.content).toContain("session_id 1 (started in an earlier session): exited with code 0");
    // Delivered into the session that is current, and never again.
    expect(wakesInTranscript(sdk)).toHaveLength(1);
    await sleep(3_500);
    expect(wakeMessages(sdk)).toHaveLength(1);
  });

  test("/new: a monitor runs on, and its report, delivered in the new session, says it started in an earlier one", async () => {
    const job = gatedJob();
    const sdk = await startSwitchableSession({
      mode: "tui",
      responses: [
        call("monitor_start", { command: `${job.cmd}; echo DONE`, description: "carried monitor", result_pattern: "^DONE$" }),
        say("started"),
        (context) => fauxAssistantMessage(`woken: ${messageText(context.messages.at(-1))}`),
      ],
    });
    cleanups.push(() => sdk.dispose());
    await sdk.prompt("start");
    const pid = await pidOf(job.dir);
    await sdk.runtime.newSession();
    expect(pidAlive(pid)).toBe(true);
    job.go();
    await pollUntil(() => customMessages(sdk.events, "pi-jobs.monitor").length > 0, { what: "the monitor's report" });
    const reports = customMessages(sdk.events, "pi-jobs.monitor").map((m) => String(m.content));
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatch(/monitor_id=\S+\nstarted_in=earlier_session\n/);
    expect(reports[0]).toContain("status=success");
  });

  test("/resume: a job started in one session is collected with write_stdin in the resumed one", async () => {
    const job = gatedJob();
    const sdk = await start([
      say("hello"),
      call("exec_command", { cmd: job.cmd, yield_time_ms: 250 }),
      say("started"),
      call("write_stdin", { session_id: 1, yield_time_ms: 30_000 }),
      say("collected"),
    ]);
    await sdk.prompt("hello");
    const first = sdk.session.sessionFile;
    expect(first).toBeDefined();
    await sdk.runtime.newSession();
    await sdk.prompt("start");
    const started = ends(sdk).at(-1)!.result.details as { output: string; status: string };
    // Running, or still starting on a loaded machine (a job is `running` only once its process exists); not ended.
    expect(["starting", "running"]).toContain(started.status);
    await sdk.runtime.switchSession(first!);
    expect(sdk.session.sessionFile).toBe(first);
    expect(pidAlive(await pidOf(job.dir))).toBe(true);
    job.go();
    await sdk.prompt("collect");
    const collected = ends(sdk).at(-1)!;
    expect(collected.isError).toBe(false);
    expect(collected.result.details).toMatchObject({ running: false, exit_code: 0 });
    // Nothing lost or repeated across the switch.
    expect(started.output + (collected.result.details as { output: string }).output).toBe("before\nafter\n");
  });

  test("/fork: the forked session stops the job with kill_session, confirmed, and no wake follows", async () => {
    const job = gatedJob();
    const sdk = await start([
      call("exec_command", { cmd: job.cmd, on_exit: "wake", yield_time_ms: 250 }),
      say("started"),
      call("kill_session", { session_id: 1 }),
      say("killed"),
    ]);
    await sdk.prompt("start");
    const pid = await pidOf(job.dir);
    const forked = await sdk.runtime.fork(sdk.lastUserEntryId(), { position: "at" });
    expect(forked.cancelled).toBe(false);
    expect(pidAlive(pid)).toBe(true);
    await sdk.prompt("kill");
    expect(ends(sdk).at(-1)!.result.details).toMatchObject({ killed: true });
    expect(pidAlive(pid)).toBe(false);
    await sleep(3_500);
    expect(wakeMessages(sdk)).toHaveLength(0);
  });

  test("quit after a switch still ends the carried job", async () => {
    const job = gatedJob();
    const sdk = await start([call("exec_command", { cmd: job.cmd, yield_time_ms: 250 }), say("started")]);
    await sdk.prompt("start");
    const pid = await pidOf(job.dir);
    await sdk.runtime.newSession();
    expect(pidAlive(pid)).toBe(true);
    await sdk.dispose();
    expect(pidAlive(pid)).toBe(false);
  });
});
