/** The spawner's line protocol (mailbox/spawner-protocol.ts): framing, and what each side accepts from the other. */
import { describe, expect, it } from "vitest";
import { line, LineReader, MAX_LINE_BYTES, monotonicMs, onThisClock, parseHello, parseReply } from "../../mailbox/spawner-protocol.ts";

describe("spawner protocol", () => {
  it("frames lines across reads, a character split between two reads included", () => {
    const reader = new LineReader();
    const bytes = Buffer.from(line({ type: "error", message: "é€" }) + line({ type: "exit", code: 0, signal: null }));
    const lines = [...reader.push(bytes.subarray(0, 28)), ...reader.push(bytes.subarray(28))];
    expect(lines.map(parseReply)).toEqual([{ type: "error", message: "é€" }, { type: "exit", code: 0, signal: null }]);
  });

  it("refuses a line over the bound instead of growing without end", () => {
    const reader = new LineReader();
    expect(() => reader.push(Buffer.alloc(MAX_LINE_BYTES + 1, 0x61))).toThrow(/longer than/);
  });

  it("reads stream and control hellos, and nothing else", () => {
    expect(parseHello(JSON.stringify({ spawn: "a1", role: "stdout" }))).toEqual({ spawn: "a1", role: "stdout" });
    const request = { spawn: "a1", role: "control", shell: "/bin/sh", command: "true", cwd: "/", env: { A: "1" }, stdin: false };
    expect(parseHello(JSON.stringify(request))).toEqual(request);
    for (const bad of [
      "not json",
      JSON.stringify({ spawn: "", role: "stdout" }),
      JSON.stringify({ spawn: "a1", role: "stdio" }),
      JSON.stringify({ ...request, env: { A: 1 } }),
      JSON.stringify({ ...request, stdin: "yes" }),
    ]) {
      expect(parseHello(bad), bad).toBeNull();
    }
  });

  it("reads replies, and nothing else", () => {
    expect(parseReply(JSON.stringify({ type: "spawned", pid: 4242, at: 1234.5 }))).toEqual({ type: "spawned", pid: 4242, at: 1234.5 });
    expect(parseReply(JSON.stringify({ type: "exit", code: null, signal: "SIGTERM" }))).toEqual({ type: "exit", code: null, signal: "SIGTERM" });
    for (const bad of [
      { type: "spawned", pid: 1, at: 1 },
      { type: "spawned", pid: "7", at: 1 },
      { type: "spawned", pid: 4242 },
      { type: "spawned", pid: 4242, at: "1" },
      { type: "exit", code: "0", signal: null },
      { type: "other" },
    ]) {
      expect(parseReply(JSON.stringify(bad)), JSON.stringify(bad)).toBeNull();
    }
  });

  it("carries a time from another process onto this thread's clock, never into its future", async () => {
    // A fork 500 ms ago on the system's clock is 500 ms or more before performance.now() here, whatever the origins.
    const forked = monotonicMs() - 500;
    const local = onThisClock(forked);
    expect(performance.now() - local).toBeGreaterThanOrEqual(500);
    // The clock is the system's: another process's reading falls between two of ours.
    const { execFileSync } = await import("node:child_process");
    const before = monotonicMs();
    const theirs = Number(execFileSync(process.execPath, ["-e", "process.stdout.write(String(Number(process.hrtime.bigint()) / 1e6))"]).toString());
    const after = monotonicMs();
    expect(theirs).toBeGreaterThanOrEqual(before);
    expect(theirs).toBeLessThanOrEqual(after);
    expect(onThisClock(monotonicMs() + 10_000)).toBeLessThanOrEqual(performance.now());
  });
});
