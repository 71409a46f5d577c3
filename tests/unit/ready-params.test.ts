import { describe, expect, it } from "vitest";
import { DEFAULT_READY_TIMEOUT_MS, readyOf, stallOf } from "../../host/tools/ready.ts";

const tool = "exec_command";

describe("ready", () => {
  it("is off when absent", () => {
    expect(readyOf(tool, undefined, 60_000)).toEqual({ ok: true, value: null });
  });
  it("fills the defaults and resolves a path on the port", () => {
    expect(readyOf(tool, { port: 5173, http: "/health" }, 1_800_000)).toEqual({
      ok: true,
      value: { pattern: null, port: 5173, http: "http://127.0.0.1:5173/health", timeoutMs: DEFAULT_READY_TIMEOUT_MS },
    });
    expect(readyOf(tool, { pattern: "ready" }, 10_000)).toEqual({ ok: true, value: { pattern: "ready", port: null, http: null, timeoutMs: 10_000 } });
  });
  it.each([
    [{}, /at least one of ready\.pattern/],
    ["x", /ready must be an object/],
    [{ http: "/health" }, /ready\.http "\/health" is a path, which needs ready\.port/],
    [{ http: "ftp://host/" }, /ready\.http must use http or https/],
    [{ http: "not a url" }, /ready\.http must be an http/],
    [{ port: 0 }, /ready\.port must be a TCP port/],
    [{ port: 80.5 }, /ready\.port/],
    [{ pattern: "[" }, /ready\.pattern does not compile/],
    [{ pattern: "" }, /ready\.pattern must be a non-empty/],
    [{ pattern: "x", timeout_ms: 0 }, /ready\.timeout_ms must be a positive/],
    [{ pattern: "x", timeout_ms: 120_000 }, /ready\.timeout_ms \(120000\) is longer than the job's lifetime/],
    [{ pattern: "x", wait: 1 }, /unknown field ready\.wait/],
  ])("rejects %j", (raw, error) => {
    const checked = readyOf(tool, raw, 60_000);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.error).toMatch(error);
  });
});

describe("stall_seconds", () => {
  it("is off when absent and in milliseconds when given", () => {
    expect(stallOf(tool, undefined)).toEqual({ ok: true, value: null });
    expect(stallOf(tool, 2)).toEqual({ ok: true, value: 2_000 });
    expect(stallOf(tool, 0.25)).toEqual({ ok: true, value: 250 });
  });
  it.each([0, -1, "2", Number.NaN, 100_000])("rejects %j", (raw) => {
    expect(stallOf(tool, raw)).toMatchObject({ ok: false, error: expect.stringMatching(/stall_seconds must be a positive number/) });
  });
});
