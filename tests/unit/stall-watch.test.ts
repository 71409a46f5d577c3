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

  it("with whole-second CPU figures (procps ps), waits for two steps, and takes a runnable process for work", () => {
    const idle = new StallWatch({ stallMs: 1_000, now: 0 });
    idle.cpu(0, 0, 1000);
    idle.cpu(1_000, 0, 1000);
    // One second of samples could miss a busy second: nothing is said before two.
    expect(idle.check(1_000)).toEqual([]);
    idle.cpu(2_000, 0, 1000);
    expect(idle.check(2_000).map((e) => e.kind)).toEqual(["stalled"]);

    // A busy loop that got a fifth of a core on a loaded machine adds nothing in whole seconds, but runs.
    const busy = new StallWatch({ stallMs: 1_000, now: 0 });
    busy.cpu(0, 0, 1000, true);
    busy.cpu(1_000, 0, 1000, false);
    busy.cpu(2_000, 0, 1000, true);
    expect(busy.check(2_000)).toEqual([]);
    busy.cpu(4_000, 0, 1000, false);
    busy.cpu(5_000, 0, 1000, false);
    // Once judged working, the next window starts afresh: a tree no longer seen runnable is stalled after it.
    expect(busy.check(5_000).map((e) => e.kind)).toEqual(["stalled"]);
  });

  it("with fine figures, a runnable process is no evidence: the CPU figure says how busy it is", () => {
    const watch = new StallWatch({ stallMs: 2_000, now: 0 });
    watch.cpu(0, 100, 10, true);
    watch.cpu(2_000, 105, 10, true);
    expect(watch.check(2_000).map((e) => e.kind)).toEqual(["stalled"]);
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
