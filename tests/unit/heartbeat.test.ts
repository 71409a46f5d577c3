import { describe, expect, it } from "vitest";
import { Heartbeat } from "../../host/heartbeat.ts";

describe("Heartbeat", () => {
  it("counts the time since the counter was first seen at its value, from the first look", () => {
    let counter = 7;
    let clock = 1000;
    const heartbeat = new Heartbeat(() => counter, () => clock);
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
    const heartbeat = new Heartbeat(() => counter, () => clock);
    clock = 5000;
    counter = -(2 ** 31);
    expect(heartbeat.stillFor()).toBe(0);
    clock = 5100;
    expect(heartbeat.stillFor()).toBe(100);
  });
});
