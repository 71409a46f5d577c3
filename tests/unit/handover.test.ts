/**
 * The /reload handover registry: state parked by one extension instance is adopted by the next, once; state of
 * another version is cleaned up instead; state nobody adopts in time abandons itself.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { adopt, HANDOVER_VERSION, park } from "../../host/session/handover.ts";

afterEach(() => {
  vi.useRealTimers();
  adopt();
});

describe("handover", () => {
  it("hands parked state to the next instance exactly once", () => {
    const abandon = vi.fn(async () => {});
    park({ runtime: { abandon } });
    const adopted = adopt();
    expect(adopted?.runtime?.abandon).toBe(abandon);
    expect(adopt()).toBeNull();
    expect(abandon).not.toHaveBeenCalled();
  });

  it("abandons parked state that nobody adopts in time", () => {
    vi.useFakeTimers();
    const abandon = vi.fn(async () => {});
    park({ runtime: { abandon } }, 10_000);
    vi.advanceTimersByTime(9_999);
    expect(abandon).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(abandon).toHaveBeenCalledTimes(1);
    expect(adopt()).toBeNull();
  });

  it("cleans up state of another version instead of adopting it", () => {
    const abandon = vi.fn(async () => {});
    park({ runtime: { abandon } });
    const registry = (globalThis as Record<symbol, { version: number }>)[Symbol.for("pi-jobs.handover")]!;
    registry.version = HANDOVER_VERSION + 1;
    expect(adopt()).toBeNull();
    expect(abandon).toHaveBeenCalledTimes(1);
  });
});
