/** One formatter per unit (shared/format.ts): each view's style of a unit, and "—" for what is unknown. */
import { describe, expect, it } from "vitest";
import { bytes, cost, count, duration, elapsed, percent, rate, UNKNOWN } from "../../shared/format.ts";

describe("figures", () => {
  it("bytes: spaced up to GiB for the console, tight up to MiB for the metrics footer", () => {
    expect([512, 1024, 3.5 * 1024 * 1024, 1.25 * 1024 ** 3].map((n) => bytes(n))).toEqual(["512 B", "1.0 KiB", "3.5 MiB", "1.25 GiB"]);
    expect([512, 65536, 3.5 * 1024 * 1024, 2 * 1024 ** 3].map((n) => bytes(n, "tight"))).toEqual(["512B", "64.0KiB", "3.5MiB", "2048.0MiB"]);
    expect(bytes(null)).toBe(UNKNOWN);
  });

  it("elapsed: a job's to the tenth with padded minutes, a latency to the hundredth below 10 s", () => {
    expect([33, 8400, 125_000, 3_723_000].map((ms) => elapsed(ms))).toEqual(["33ms", "8.4s", "2m05s", "1h02m03s"]);
    expect([33, 8400, 12_345, 125_000].map((ms) => elapsed(ms, "latency"))).toEqual(["33ms", "8.40s", "12.3s", "2m5s"]);
    expect(elapsed(null, "latency")).toBe(UNKNOWN);
  });

  it("rate: lines whole from 100, tokens whole from 1000", () => {
    expect([12.34, 150.4].map((n) => rate(n))).toEqual(["12.3", "150"]);
    expect([150.44, 1500.4].map((n) => rate(n, "tokens"))).toEqual(["150.4", "1500"]);
    expect(rate(null, "tokens")).toBe(UNKNOWN);
  });

  it("percent: a tenth below 10 % by default, fixed digits on request, and the caller's word for unknown", () => {
    expect([7.54, 42.4].map((n) => percent(n))).toEqual(["7.5%", "42%"]);
    expect(percent(24, 1)).toBe("24.0%");
    expect(percent(93.4, 0)).toBe("93%");
    expect(percent(null)).toBe(UNKNOWN);
    expect(percent(null, 1, "?")).toBe("?");
  });

  it("count, cost and a set duration", () => {
    expect([950, 1200, 48_000, 1_500_000].map(count)).toEqual(["950", "1.2k", "48k", "1.5M"]);
    expect([0.042, 1.25].map(cost)).toEqual(["$0.042", "$1.25"]);
    expect([600_000, 90_000, 5_400_000, 250].map(duration)).toEqual(["10m", "90s", "90m", "250ms"]);
  });
});
