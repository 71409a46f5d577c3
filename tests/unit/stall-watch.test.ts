import { describe, expect, it } from "vitest";
import { PROMPT_QUIET_MS, StallWatch } from "../../actors/watch/stall.ts";

describe("StallWatch", () => {
  it("is stalled once quiet for stallMs with under 1 % of a core, once per episode", () => {
    const watch = new StallWatch({ stallMs: 2_000, now: 0 });
    watch.cpu(0, 100);
    watch.cpu(1_000, 100);
    expect(watch.check(1_000)).toEqual([]);
    watch.cpu(2_000, 105); // 5 ms over 2 s: 0.25 %
    expect(watch.check(2_000)).toEqual([{ kind: "stalled", quietMs: 2_000, cpuMs: 5 }]);
    expect(watch.state).toEqual({ stalled: true, waitingForInput: false });
    expect(watch.wantsCpu()).toBe(false);
    expect(watch.check(10_000)).toEqual([]);
    // Output ends the episode; a new one can begin.
    expect(watch.output(11_000, null)).toEqual([{ kind: "active" }]);
    expect(watch.state.stalled).toBe(false);
    watch.cpu(11_000, 105);
    watch.cpu(13_000, 105);
    expect(watch.check(13_000).map((e) => e.kind)).toEqual(["stalled"]);
  });

  it("a silent job that uses CPU is working, not stalled", () => {
    const watch = new StallWatch({ stallMs: 2_000, now: 0 });
    watch.cpu(0, 0);
    watch.cpu(2_000, 1_900);
    expect(watch.check(2_000)).toEqual([]);
    watch.cpu(4_000, 3_900);
    expect(watch.check(4_000)).toEqual([]);
    expect(watch.state.stalled).toBe(false);
  });

  it("says nothing about CPU it has not sampled over most of the quiet time", () => {
    const watch = new StallWatch({ stallMs: 2_000, now: 0 });
    watch.cpu(1_900, 0);
    watch.cpu(2_000, 0);
    expect(watch.check(2_000)).toEqual([]);
  });

  it("a tree whose CPU total drops (a process ended) restarts its window", () => {
    const watch = new StallWatch({ stallMs: 2_000, now: 0 });
    watch.cpu(0, 500);
    watch.cpu(2_000, 10);
    expect(watch.check(2_000)).toEqual([]);
  });

  it("judges no stall without a stall time, and prompts always", () => {
    const watch = new StallWatch({ stallMs: null, now: 0 });
    expect(watch.wantsCpu()).toBe(false);
    watch.output(100, "Password: ");
    expect(watch.promptCheckAt()).toBe(100 + PROMPT_QUIET_MS);
    expect(watch.check(100 + PROMPT_QUIET_MS - 1)).toEqual([]);
    expect(watch.check(100 + PROMPT_QUIET_MS)).toEqual([{ kind: "waiting_for_input", prompt: "Password: " }]);
    expect(watch.promptCheckAt()).toBeNull();
    expect(watch.check(100_000)).toEqual([]);
    expect(watch.output(200_000, null)).toEqual([{ kind: "active" }]);
    expect(watch.state.waitingForInput).toBe(false);
  });
});
