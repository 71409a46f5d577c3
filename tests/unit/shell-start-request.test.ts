import { describe, expect, it } from "vitest";
import { DEFAULT_PTY_SIZE, OUTPUT_HEAD_BYTES, OUTPUT_TAIL_BYTES } from "../../host/shell/limits.ts";
import { startRequestOf } from "../../host/shell/start-request.ts";
import type { ExecRequest } from "../../host/shell/validate.ts";

const exec = (over: Partial<ExecRequest> = {}): ExecRequest => ({
  cmd: "npm test",
  workdir: null,
  tty: false,
  yieldTimeMs: undefined,
  timeoutMs: 60_000,
  onExit: "none",
  shell: null,
  ready: null,
  stallMs: null,
  persist: false,
  onStall: "none",
  limits: null,
  raw: false,
  ...over,
});
const limits = { killGraceMs: 2000, logMaxBytes: 1024 };

describe("the job an exec_command starts", () => {
  it("runs the command on pipes with stdin, under the request's lifetime and the service's limits", () => {
    expect(startRequestOf(exec(), "/work", limits)).toEqual({
      kind: "shell",
      command: "npm test",
      cwd: "/work",
      io: { kind: "pipes", stdin: true },
      timeoutMs: 60_000,
      killGraceMs: 2000,
      log: { maxBytes: 1024, onQuota: "stop" },
      unread: { headBytes: OUTPUT_HEAD_BYTES, tailBytes: OUTPUT_TAIL_BYTES },
      label: "shell: npm test",
    });
  });

  it("a tty gets a PTY of the default size; a shell and watches are passed only when asked for", () => {
    const ready = { pattern: "Local:", port: null, http: null, timeoutMs: 5000 };
    const request = startRequestOf(exec({ tty: true, shell: "/bin/bash", ready, stallMs: null }), "/work", limits);
    expect(request).toMatchObject({ io: { kind: "pty", ...DEFAULT_PTY_SIZE }, shell: "/bin/bash", watch: { ready, stallMs: null } });
    expect(startRequestOf(exec({ stallMs: 30_000 }), "/work", limits).watch).toEqual({ ready: null, stallMs: 30_000 });
    expect("watch" in startRequestOf(exec(), "/work", limits)).toBe(false);
    expect("shell" in startRequestOf(exec(), "/work", limits)).toBe(false);
  });

  it("passes the limits and the watchdog's thresholds to the actor's watches", () => {
    const memoryLimit = { memoryBytes: 200 * 1024 * 1024, cpuMs: null, processes: 50 };
    const watchdog = { memoryBytes: 4 * 1024 ** 3, cpuPercent: 100, sustainMs: 600_000 };
    expect(startRequestOf(exec({ limits: memoryLimit }), "/work", limits, watchdog).watch).toEqual({ ready: null, stallMs: null, limits: memoryLimit, watchdog });
    expect(startRequestOf(exec(), "/work", limits, watchdog).watch).toEqual({ ready: null, stallMs: null, watchdog });
  });

  it("runs a persisted job's follower, whose watches look at the job's own tree", () => {
    const tree = { tag: "p0123456789ab/job-abc123", pid: 4322, spawnedAtEpoch: 1_700_000_000_000 };
    const request = startRequestOf(exec({ cmd: "npm run dev" }), "/entry", limits, null, { command: "exec perl follow.pl", shell: "/bin/sh", tree });
    expect(request).toMatchObject({ command: "exec perl follow.pl", shell: "/bin/sh", label: "shell (persisted): npm run dev" });
    expect(request.watch).toEqual({ ready: null, stallMs: null, tree });
    // An entry whose job carries no tag of its own: nothing to look at but the follower.
    expect("watch" in startRequestOf(exec(), "/entry", limits, null, { command: "x", shell: "/bin/sh", tree: null })).toBe(false);
  });

  it("labels the job with at most 80 characters of its command", () => {
    expect(startRequestOf(exec({ cmd: "x".repeat(200) }), "/work", limits).label).toBe(`shell: ${"x".repeat(80)}`);
  });
});
