/**
 * Services and stuck jobs on the real runtime: readiness by pattern, port and HTTP; the ports a job's processes
 * really listen on; stalls and prompts on pipes and PTYs, with their wake. Real processes only.
 */
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SupervisedRuntime } from "../../host/runtime/runtime.ts";
import type { WakeDetails } from "../../host/delivery/wake-text.ts";
import type { CallContext, ShellService } from "../../host/shell/service.ts";
import { freePort } from "../fixtures/free-port.ts";
import { runtimeFor, waitFor } from "./helpers.ts";
import { wakingShell, type WakingShell } from "./waking-shell.ts";

let runtime: SupervisedRuntime;
let shell: WakingShell;
let service: ShellService;
let sent: { content: string; details: WakeDetails }[];
let calls = 0;
const held: Server[] = [];

function call(): CallContext {
  calls += 1;
  return { toolCallId: `call-${calls}`, cwd: tmpdir() };
}

beforeEach(() => {
  runtime = runtimeFor();
  sent = [];
  shell = wakingShell(runtime, { quietMs: 200, maxDelayMs: 1000 }, (_batch, message) => sent.push(message));
  service = shell.service;
});

afterEach(async () => {
  await shell.close();
  await runtime.shutdown();
  await Promise.all(held.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A port this test process listens on for the rest of the test (not the job's). */
async function occupiedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  held.push(server);
  return (server.address() as { port: number }).port;
}

async function sessionView(id: number) {
  return (await service.listSessions({})).sessions.find((s) => s.session_id === id);
}

describe("exec_command ready", () => {
  it("returns when a line matches the pattern, with its captures, and the job keeps running", async () => {
    const r = await service.exec(
      { cmd: "sleep 0.5; echo 'starting…'; echo '  Local:   http://localhost:4321/'; sleep 600", ready: { pattern: "Local:\\s+(?<url>http://\\S+)" } },
      call(),
    );
    expect(r).toMatchObject({ status: "running", running: true, wait_status: "ready" });
    expect(r.ready).toMatchObject({ status: "ready", matched: "Local:   http://localhost:4321/", captures: { url: "http://localhost:4321/" } });
    expect(r.ready!.elapsed_ms).toBeGreaterThanOrEqual(400);
    expect(r.output).toContain("starting…");
    expect(r.session_id).toBeGreaterThan(0);
  });

  it("matches an idle partial line (a banner without a newline)", async () => {
    const r = await service.exec({ cmd: "printf 'ready on 7777'; sleep 600", ready: { pattern: "ready on (?<port>\\d+)" } }, call());
    expect(r.ready).toMatchObject({ status: "ready", captures: { port: "7777" } });
  });

  it("waits for an HTTP server's port and its answer", async () => {
    const port = await freePort();
    const r = await service.exec(
      { cmd: `sleep 0.3; exec python3 -m http.server ${port} --bind 127.0.0.1`, ready: { port, http: "/", timeout_ms: 30_000 } },
      call(),
    );
    expect(r.ready).toMatchObject({ status: "ready", port });
    expect(r.running).toBe(true);
    const answer = await fetch(`http://127.0.0.1:${port}/`);
    // An unread body can leave undici's parser paused, and the server closing the socket then throws an uncatchable
    // assertion in this process: the body is cancelled, as actors/watch/ready.ts does.
    await answer.body?.cancel();
    expect(answer.status).toBe(200);
    expect((await sessionView(r.session_id!))?.listening).toEqual([port]);
  });

  it("a port someone else listens on does not make the job ready", async () => {
    const port = await occupiedPort();
    const r = await service.exec({ cmd: "sleep 600", ready: { port, timeout_ms: 1500 } }, call());
    expect(r.ready).toMatchObject({ status: "timeout" });
    expect(r.ready!.port).toBeUndefined();
    expect(r.running).toBe(true);
    expect(r.wait_status).toBe("deadline");
  });

  it("a ready wait ends early on steering and on cancellation, and the job keeps running", async () => {
    const never = { cmd: "sleep 600", ready: { pattern: "never printed" } };
    const steering = service.exec(never, call());
    setTimeout(() => service.steer(), 300);
    const steered = await steering;
    expect(steered).toMatchObject({ wait_status: "steered", ready: { status: "not_ready" } });
    expect(["starting", "running"]).toContain(steered.status);
    const controller = new AbortController();
    const cancelling = service.exec(never, { ...call(), signal: controller.signal });
    setTimeout(() => controller.abort(), 300);
    const cancelled = await cancelling;
    expect(cancelled).toMatchObject({ wait_status: "cancelled", output: "", ready: { status: "not_ready" } });
    for (const r of [steered, cancelled]) expect((await sessionView(r.session_id!))?.status).toMatch(/^(starting|running)$/);
  });

  it("reports exited when the job ends before it is ready", async () => {
    const r = await service.exec({ cmd: "echo nope; exit 2", ready: { pattern: "never printed" } }, call());
    expect(r).toMatchObject({ status: "exited", exit_code: 2, running: false, wait_status: "completed" });
    expect(r.ready!.status).toBe("exited");
    expect(r.output).toContain("nope");
  });

  it("rejects invalid combinations with the field named", async () => {
    await expect(service.exec({ cmd: "true", ready: {} }, call())).rejects.toThrow(/ready needs at least one of ready\.pattern/);
    await expect(service.exec({ cmd: "true", ready: { http: "/health" } }, call())).rejects.toThrow(/ready\.http .* needs ready\.port/);
    await expect(service.exec({ cmd: "true", ready: { port: 70_000 } }, call())).rejects.toThrow(/ready\.port/);
    await expect(service.exec({ cmd: "true", ready: { pattern: "(" } }, call())).rejects.toThrow(/ready\.pattern does not compile/);
    await expect(service.exec({ cmd: "true", ready: { pattern: "x" }, yield_time_ms: 500 }, call())).rejects.toThrow(/ready and yield_time_ms/);
    await expect(service.exec({ cmd: "true", timeout_seconds: 5, ready: { pattern: "x", timeout_ms: 6000 } }, call())).rejects.toThrow(/ready\.timeout_ms/);
    await expect(service.exec({ cmd: "true", ready: { pattern: "x", bogus: 1 } }, call())).rejects.toThrow(/ready\.bogus/);
    await expect(service.exec({ cmd: "true", stall_seconds: -1 }, call())).rejects.toThrow(/stall_seconds/);
    await expect(service.exec({ cmd: "true", on_stall: "maybe" }, call())).rejects.toThrow(/on_stall/);
    expect(runtime.list()).toEqual([]);
  });
});

describe("listening ports", () => {
  it("shows the port a server really took when the one it asked for was busy", async () => {
    const busy = await occupiedPort();
    const server = [
      "const net = require('net');",
      `const want = ${busy};`,
      "const listen = (port) => { const s = net.createServer(); s.once('error', () => listen(port === want ? want + 1 : 0));",
      "  s.listen(port, '127.0.0.1', () => console.log('listening on ' + s.address().port)); };",
      "listen(want);",
    ].join("\n");
    const r = await service.exec({ cmd: `exec node -e "${server.replace(/"/g, '\\"')}"`, ready: { pattern: "listening on (?<port>\\d+)" } }, call());
    expect(r.ready?.status).toBe("ready");
    const took = Number(r.ready!.captures!.port);
    expect(took).not.toBe(busy);
    const view = await sessionView(r.session_id!);
    expect(view?.listening).toEqual([took]);
    const listing = await service.listSessions({});
    expect(listing.sessions.length).toBe(1);
  });
});

describe("stalls and prompts", () => {
  it("a pipe job asking for a password is waiting for input, wakes once, and answering clears it", async () => {
    const r = await service.exec({ cmd: "printf 'Password: '; read secret; echo got-$secret; sleep 600", on_stall: "wake", yield_time_ms: 250 }, call());
    const id = r.session_id!;
    await waitFor(async () => (await sessionView(id))?.supervision.waiting_for_input, 30_000, "waiting_for_input");
    await waitFor(() => sent.length > 0, 30_000, "the stuck wake");
    expect(sent).toHaveLength(1);
    expect(sent[0]!.content).toContain(`session_id ${id} appears to be waiting for input: \`Password: \``);
    expect(sent[0]!.content).toContain("tty: true");
    expect(sent[0]!.details.stuck).toEqual([expect.objectContaining({ session_id: id, kind: "waiting_for_input", prompt: "Password: ", tty: false })]);
    const answered = await service.writeStdin({ session_id: id, chars: "hunter2\n", yield_time_ms: 1000 }, call());
    expect(answered.output).toContain("got-hunter2");
    expect(answered.supervision.waiting_for_input).toBe(false);
  });

  it("a PTY job at a getpass prompt is waiting for input", async () => {
    const r = await service.exec({ cmd: "python3 -c 'import getpass; getpass.getpass()'", tty: true, yield_time_ms: 250 }, call());
    const id = r.session_id!;
    await waitFor(async () => (await sessionView(id))?.supervision.waiting_for_input, 30_000, "waiting_for_input");
    // on_exit and on_stall are both "none": the flag is shown, nobody is woken.
    expect(sent).toEqual([]);
  });

  it("sleep 600 with stall_seconds: 2 is stalled, and on_exit wake wakes for it", async () => {
    const r = await service.exec({ cmd: "sleep 600", stall_seconds: 2, on_exit: "wake", yield_time_ms: 250 }, call());
    const id = r.session_id!;
    await waitFor(async () => (await sessionView(id))?.supervision.stalled, 30_000, "stalled");
    await waitFor(() => sent.length > 0, 30_000, "the stuck wake");
    expect(sent[0]!.content).toContain(`session_id ${id} appears stalled`);
    expect(sent[0]!.details.stuck?.[0]).toMatchObject({ session_id: id, kind: "stalled" });
  });

  it("a busy loop that prints nothing is not stalled", async () => {
    const r = await service.exec({ cmd: "while :; do :; done", stall_seconds: 2, on_stall: "wake", yield_time_ms: 250 }, call());
    const id = r.session_id!;
    // Three stall windows of silence: long enough for a stall to be judged several times.
    await waitFor(async () => ((await sessionView(id))?.supervision.quiet_ms ?? 0) >= 6_000, 30_000, "six quiet seconds");
    const view = await sessionView(id);
    expect(view?.supervision).toMatchObject({ stalled: false, waiting_for_input: false });
    expect(sent).toEqual([]);
  });
});
