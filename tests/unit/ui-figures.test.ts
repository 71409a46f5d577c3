/** Live figures the console shows: per-job output rates. */
import { describe, expect, it } from "vitest";
import { RateTracker } from "../../host/console/rates.ts";

describe("rates", () => {
  it("a rate is the change over at least one second; shorter intervals keep the last rate", () => {
    const rates = new RateTracker();
    expect(rates.observe("a", { lines: 0, bytes: 0 }, 0)).toEqual({ linesPerSecond: null, bytesPerSecond: null });
    expect(rates.observe("a", { lines: 5, bytes: 50 }, 400)).toEqual({ linesPerSecond: null, bytesPerSecond: null });
    expect(rates.observe("a", { lines: 20, bytes: 2000 }, 2000)).toEqual({ linesPerSecond: 10, bytesPerSecond: 1000 });
    expect(rates.observe("a", { lines: 25, bytes: 2100 }, 2100)).toEqual({ linesPerSecond: 10, bytesPerSecond: 1000 });
    rates.retain(new Set());
    expect(rates.observe("a", { lines: 30, bytes: 0 }, 5000).linesPerSecond).toBeNull();
  });
});
