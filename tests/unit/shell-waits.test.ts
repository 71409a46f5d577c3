import { describe, expect, it } from "vitest";
import { planWait, parseUtcInstant, type WaitRequest } from "../../host/shell/waits.ts";
import { readEmptyPollCap, steerInterruptEnabled } from "../../host/config.ts";

const NOW = Date.parse("2030-01-01T00:00:00Z");
const noCap = { ok: true as const, capMs: null };

function plan(request: Partial<WaitRequest> & Pick<WaitRequest, "kind">) {
  const r = planWait({ emptyPollCap: noCap, nowEpochMs: NOW, ...request });
  if (!r.ok) throw new Error(r.error);
  return r.plan;
}

describe("exec and input-bearing waits", () => {
  it("default to 10000 ms for exec and 250 ms with input", () => {
    expect(plan({ kind: "exec" })).toEqual({ mode: "relative", durationMs: 10_000 });
    expect(plan({ kind: "input" })).toEqual({ mode: "relative", durationMs: 250 });
  });
  it("clamp into 250–30000 ms", () => {
    expect(plan({ kind: "exec", yieldTimeMs: 0 }).durationMs).toBe(250);
    expect(plan({ kind: "exec", yieldTimeMs: 100 }).durationMs).toBe(250);
    expect(plan({ kind: "exec", yieldTimeMs: 120_000 }).durationMs).toBe(30_000);
    expect(plan({ kind: "input", yieldTimeMs: 0 }).durationMs).toBe(250);
    expect(plan({ kind: "input", yieldTimeMs: 99_999 }).durationMs).toBe(30_000);
    expect(plan({ kind: "input", yieldTimeMs: 1234 }).durationMs).toBe(1234);
  });
  it("are not capped by the empty-poll setting", () => {
    expect(planWait({ kind: "exec", yieldTimeMs: 20_000, emptyPollCap: { ok: true, capMs: 5000 }, nowEpochMs: NOW })).toEqual({
      ok: true,
      plan: { mode: "relative", durationMs: 20_000 },
    });
  });
});

describe("empty polls", () => {
  it("explicit 0 is immediate", () => {
    expect(plan({ kind: "empty", yieldTimeMs: 0 })).toEqual({ mode: "immediate", durationMs: 0 });
  });
  it("omitted defaults to 5000 ms and positive values have a 5000 ms minimum", () => {
    expect(plan({ kind: "empty" }).durationMs).toBe(5000);
    expect(plan({ kind: "empty", yieldTimeMs: 1 }).durationMs).toBe(5000);
    expect(plan({ kind: "empty", yieldTimeMs: 0.5 })).toEqual({ mode: "relative", durationMs: 5000 });
    expect(plan({ kind: "empty", yieldTimeMs: 60_000 }).durationMs).toBe(60_000);
  });
  it("are capped by PI_SHELL_JOBS_MAX_EMPTY_POLL_MS, floored at 5000", () => {
    const cap = readEmptyPollCap({ PI_SHELL_JOBS_MAX_EMPTY_POLL_MS: "7000" });
    expect(planWait({ kind: "empty", yieldTimeMs: 60_000, emptyPollCap: cap, nowEpochMs: NOW })).toEqual({
      ok: true,
      plan: { mode: "relative", durationMs: 7000 },
    });
    expect(readEmptyPollCap({ PI_SHELL_JOBS_MAX_EMPTY_POLL_MS: "10" })).toEqual({ ok: true, capMs: 5000 });
    expect(readEmptyPollCap({})).toEqual({ ok: true, capMs: null });
  });
  it("fail with an invalid cap, naming the variable, but only when the cap applies", () => {
    const bad = readEmptyPollCap({ PI_SHELL_JOBS_MAX_EMPTY_POLL_MS: "soon" });
    expect(bad.ok).toBe(false);
    const r = planWait({ kind: "empty", emptyPollCap: bad, nowEpochMs: NOW });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain("PI_SHELL_JOBS_MAX_EMPTY_POLL_MS");
    expect(planWait({ kind: "empty", yieldTimeMs: 0, emptyPollCap: bad, nowEpochMs: NOW }).ok).toBe(true);
    expect(planWait({ kind: "exec", emptyPollCap: bad, nowEpochMs: NOW }).ok).toBe(true);
    expect(planWait({ kind: "empty", yieldUntil: "2030-01-01T00:00:01Z", emptyPollCap: bad, nowEpochMs: NOW }).ok).toBe(true);
    expect(readEmptyPollCap({ PI_SHELL_JOBS_MAX_EMPTY_POLL_MS: "-5" }).ok).toBe(false);
  });
});

describe("yield_until", () => {
  it("is an absolute wait measured from now; the past is a zero wait", () => {
    expect(plan({ kind: "empty", yieldUntil: "2030-01-01T00:00:03Z" })).toEqual({ mode: "absolute", durationMs: 3000, untilEpochMs: NOW + 3000 });
    expect(plan({ kind: "empty", yieldUntil: "2000-01-01T00:00:00Z" })).toMatchObject({ mode: "absolute", durationMs: 0 });
  });
  it("is not capped by the empty-poll setting", () => {
    const r = planWait({ kind: "empty", yieldUntil: "2030-01-01T01:00:00Z", emptyPollCap: { ok: true, capMs: 5000 }, nowEpochMs: NOW });
    expect(r).toMatchObject({ ok: true, plan: { durationMs: 3_600_000 } });
  });
  it("requires an explicit UTC designator", () => {
    expect(parseUtcInstant("2030-01-01T00:00:00Z")).toBe(NOW);
    expect(parseUtcInstant("2030-01-01T00:00:00.250+00:00")).toBe(NOW + 250);
    expect(parseUtcInstant("2030-01-01T00:00:00")).toBeNull();
    expect(parseUtcInstant("2030-01-01T00:00:00+02:00")).toBeNull();
    expect(parseUtcInstant("tomorrow")).toBeNull();
    const r = planWait({ kind: "empty", yieldUntil: "2030-01-01 00:00", emptyPollCap: noCap, nowEpochMs: NOW });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain("yield_until");
  });
  it("is exclusive with yield_time_ms and with input", () => {
    const a = planWait({ kind: "empty", yieldUntil: "2030-01-01T00:00:00Z", yieldTimeMs: 5, emptyPollCap: noCap, nowEpochMs: NOW });
    expect(a.ok === false && a.error.includes("yield_time_ms")).toBe(true);
    const b = planWait({ kind: "input", yieldUntil: "2030-01-01T00:00:00Z", emptyPollCap: noCap, nowEpochMs: NOW });
    expect(b.ok === false && b.error.includes("input")).toBe(true);
  });
});

describe("steering setting", () => {
  it("is enabled unless set to 0", () => {
    expect(steerInterruptEnabled({})).toBe(true);
    expect(steerInterruptEnabled({ PI_SHELL_JOBS_STEER_INTERRUPT: "1" })).toBe(true);
    expect(steerInterruptEnabled({ PI_SHELL_JOBS_STEER_INTERRUPT: "0" })).toBe(false);
  });
});
