import { describe, expect, it } from "vitest";
import { addDelta, codePoints, createObsWindow, obsRate } from "../../host/metrics/obs-rate.ts";

describe("OBS TPS ≈", () => {
  it("counts Unicode code points, including whitespace, not UTF-16 units", () => {
    expect(codePoints("a b")).toBe(3);
    expect(codePoints("😀😀")).toBe(2);
    expect(codePoints("")).toBe(0);
  });

  it("needs two non-empty deltas and 250 ms after the first", () => {
    const w = createObsWindow(0);
    addDelta(w, 100, "x".repeat(40));
    expect(obsRate(w, 400)).toBeNull(); // one delta only
    addDelta(w, 200, "");
    expect(obsRate(w, 400)).toBeNull(); // empty deltas do not count
    addDelta(w, 300, "x".repeat(40));
    expect(obsRate(w, 340)).toBeNull(); // only 240 ms after the first
    expect(obsRate(w, 350)).not.toBeNull();
  });

  it("divides by the window clipped at request start, not at the first chunk", () => {
    const w = createObsWindow(1000);
    addDelta(w, 1500, "x".repeat(400));
    addDelta(w, 1900, "x".repeat(400));
    // 800 code points / 4 = 200 tokens over the 1 s since request start (not the 0.4 s since the first chunk).
    expect(obsRate(w, 2000)).toBeCloseTo(200, 6);
  });

  it("uses a rolling 2 s window and decays to zero during silence", () => {
    const w = createObsWindow(0);
    addDelta(w, 100, "x".repeat(80));
    addDelta(w, 600, "x".repeat(80));
    expect(obsRate(w, 1000)).toBeCloseTo(160 / 4 / 1, 6);
    // At 3 s the window is [1 s, 3 s]: nothing arrived there.
    expect(obsRate(w, 3000)).toBe(0);
    addDelta(w, 3100, "x".repeat(40));
    // Window [1.2 s, 3.2 s] holds only the new 40 code points = 10 tokens / 2 s.
    expect(obsRate(w, 3200)).toBeCloseTo(5, 6);
  });

  it("keeps only recent buckets", () => {
    const w = createObsWindow(0);
    for (let t = 0; t < 60_000; t += 50) addDelta(w, t, "abcd");
    obsRate(w, 60_000);
    expect(w.buckets.size).toBeLessThanOrEqual(21);
  });
});
