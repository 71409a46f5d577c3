/**
 * The supervisor's verdict on a heartbeat that stands still (host/runtime/heartbeat.ts), on injected clocks and thread
 * readings: hung only when the thread had the CPU to beat and did not, or slept in a call; starved otherwise.
 */
import { describe, expect, it } from "vitest";
import {
  Heartbeat,
  HUNG_CPU_MS,
  judgeStill,
  OwnClock,
  readActorThread,
  STALLED_ACTOR_MS,
  type ThreadReading,
  type ThreadSample,
} from "../../host/runtime/heartbeat.ts";

const noFigures = async (): Promise<ThreadReading | null> => null;
const sample = (at: number, cpuMs: number, queuedMs: number, runnable: boolean): ThreadSample => ({ at, thread: { cpuMs, queuedMs, runnable } });

describe("Heartbeat", () => {
  it("counts the time since the counter was first seen at its value, from the first look", () => {
    let counter = 7;
    let clock = 1000;
    const heartbeat = new Heartbeat(() => counter, noFigures, () => clock);
    clock = 1400;
    expect(heartbeat.stillFor()).toBe(400);
    counter = 8;
    clock = 1500;
    expect(heartbeat.stillFor()).toBe(0);
    clock = 2250;
    expect(heartbeat.stillFor()).toBe(750);
  });

  it("takes any change for a beat, a counter that wrapped round included", () => {
    let counter = 2 ** 31 - 1;
    let clock = 0;
    const heartbeat = new Heartbeat(() => counter, noFigures, () => clock);
    clock = 5000;
    counter = -(2 ** 31);
    expect(heartbeat.stillFor()).toBe(0);
    clock = 5100;
    expect(heartbeat.stillFor()).toBe(100);
  });

  it("has nothing to judge while the actor has not started on a thread, and counts from its start", async () => {
    let counter: number | null = null;
    let clock = 0;
    const heartbeat = new Heartbeat(() => counter, noFigures, () => clock);
    clock = 10 * STALLED_ACTOR_MS;
    expect(heartbeat.stillFor()).toBe(0);
    expect(await heartbeat.look()).toEqual({ kind: "live" });
    counter = 0;
    expect(heartbeat.stillFor()).toBe(0);
    clock += STALLED_ACTOR_MS;
    expect((await heartbeat.look()).kind).toBe("hung");
  });

  it("without the thread's figures, takes a heartbeat still for STALLED_ACTOR_MS for a hang (the rule before figures)", async () => {
    let clock = 0;
    const heartbeat = new Heartbeat(() => 3, noFigures, () => clock);
    clock = STALLED_ACTOR_MS - 1;
    expect(await heartbeat.look()).toEqual({ kind: "live" });
    clock = STALLED_ACTOR_MS;
    expect(await heartbeat.look()).toMatchObject({ kind: "hung", stillMs: STALLED_ACTOR_MS, evidence: "its heartbeat stood still for 15.0 s" });
  });

  it("reads the thread when the counter moves and when a verdict is due, never in between", async () => {
    let counter = 0;
    let clock = 0;
    const readings: number[] = [];
    const heartbeat = new Heartbeat(
      () => counter,
      async () => {
        readings.push(clock);
        return { cpuMs: clock / 100, queuedMs: 0, runnable: true };
      },
      () => clock,
    );
    for (clock = 500; clock < STALLED_ACTOR_MS; clock += 500) expect(await heartbeat.look()).toEqual({ kind: "live" });
    expect(readings).toEqual([0]);
    clock = 14_500;
    counter = 1;
    await heartbeat.look();
    expect(readings).toEqual([0, 14_500]);
    clock = 14_500 + STALLED_ACTOR_MS;
    // Runnable now, 150 ms of CPU in 15 s: waiting for a CPU, not hung.
    expect(await heartbeat.look()).toEqual({ kind: "starved", stillMs: STALLED_ACTOR_MS });
    expect(readings).toEqual([0, 14_500, 29_500]);
  });

  it("says nothing of a heartbeat that moved while the figures were read", async () => {
    let counter = 0;
    let clock = 0;
    const heartbeat = new Heartbeat(
      () => counter,
      async () => {
        if (clock > 0) counter += 1;
        return { cpuMs: clock, queuedMs: 0, runnable: true };
      },
      () => clock,
    );
    clock = 2 * STALLED_ACTOR_MS;
    expect(await heartbeat.look()).toEqual({ kind: "live" });
  });
});

describe("judgeStill", () => {
  const start = sample(0, 100, 1000, true);
  const still = STALLED_ACTOR_MS;

  it("judges nothing before the heartbeat has stood still for STALLED_ACTOR_MS", () => {
    expect(judgeStill(still - 1, start, sample(still - 1, 5000, 1000, true))).toEqual({ kind: "live" });
  });

  it("a thread that ran for HUNG_CPU_MS without a beat is hung, however much it also waited", () => {
    const verdict = judgeStill(still, start, sample(still, 100 + HUNG_CPU_MS, 1000 + still / 2, true));
    expect(verdict).toEqual({ kind: "hung", stillMs: still, evidence: "its heartbeat stood still for 15.0 s while its thread ran 1.0 s on a CPU" });
    expect(judgeStill(still, start, sample(still, 100 + HUNG_CPU_MS - 1, 1000, true)).kind).toBe("starved");
  });

  it("a thread waiting for a CPU now is starved: the kernel counts a wait only once it ends", () => {
    // 40 ms of CPU in 15 s and no finished wait: it has been on the run queue since it last ran.
    expect(judgeStill(still, start, sample(still, 140, 1000, true))).toEqual({ kind: "starved", stillMs: still });
  });

  it("an asleep thread is starved when it spent most of the time waiting for a CPU, hung when it did not", () => {
    expect(judgeStill(still, start, sample(still, 140, 1000 + still / 2, false)).kind).toBe("starved");
    expect(judgeStill(still, start, sample(still, 140, 1000 + still / 2 - 1, false))).toEqual({
      kind: "hung",
      stillMs: still,
      evidence: "its heartbeat stood still for 15.0 s while its thread slept (it waited 7.5 s for a CPU)",
    });
  });

  it("with the machine's load instead of the thread's figures: starved while runnable threads fill every CPU, else hung", () => {
    const load = (at: number, loadPerCpu: number): ThreadSample => ({ at, thread: { loadPerCpu } });
    expect(judgeStill(still - 1, load(0, 0.2), load(still - 1, 0.2))).toEqual({ kind: "live" });
    expect(judgeStill(still, load(0, 0.2), load(still, 1.5))).toEqual({ kind: "starved", stillMs: still });
    expect(judgeStill(still, load(0, 3), load(still, 0.4))).toEqual({
      kind: "hung",
      stillMs: still,
      evidence: "its heartbeat stood still for 15.0 s while the machine had a CPU to spare (load 0.40 per CPU)",
    });
  });

  it("without figures at either end, falls back to the heartbeat alone", () => {
    expect(judgeStill(still, { at: 0, thread: null }, sample(still, 100, 1000, true)).kind).toBe("hung");
    expect(judgeStill(still, start, { at: still, thread: null }).kind).toBe("hung");
  });
});

describe("OwnClock", () => {
  it("counts the time between looks except where the thread mostly waited for a CPU", async () => {
    const samples = [
      sample(0, 0, 0, true),
      // Ran all of the first second: its own.
      sample(1000, 1000, 0, true),
      // Runnable and ran 10 ms of a second: waiting for a CPU.
      sample(2000, 1010, 0, true),
      // Asleep, and its finished waits fill most of the second: starved too.
      sample(3000, 1020, 900, false),
      // Asleep and hardly waited: its own (it had the CPU and did not use it).
      sample(4000, 1020, 910, false),
    ];
    const clock = new OwnClock(async () => samples.shift()!);
    const elapsed: number[] = [];
    for (let i = 0; i < 5; i += 1) elapsed.push(await clock.elapsed());
    expect(elapsed).toEqual([0, 1000, 1000, 1000, 2000]);
  });

  it("counts all of it without the thread's figures", async () => {
    let at = 0;
    const clock = new OwnClock(async () => ({ at: (at += 500), thread: null }));
    await clock.elapsed();
    await clock.elapsed();
    expect(await clock.elapsed()).toBe(1000);
  });
});

describe("readActorThread", () => {
  it.runIf(process.platform === "linux")("reads a live thread of this process, and nothing for one that does not exist", async () => {
    const reading = (await readActorThread({ started: true, tid: process.pid })) as ThreadReading | null;
    expect(reading).not.toBeNull();
    expect(reading!.cpuMs).toBeGreaterThan(0);
    expect(reading!.queuedMs).toBeGreaterThanOrEqual(0);
    expect(await readActorThread({ started: true, tid: 2 ** 30 })).toBeNull();
    expect(await readActorThread({ started: false })).toBeNull();
  });
});
