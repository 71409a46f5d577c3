/**
 * A process tree's CPU (actors/watch/tree-cpu.ts) is a figure only when some process of it could be read: a tree whose
 * processes are all gone (or a system without `/proc`) is unknown, never zero, so the stall watch cannot take it for idle.
 */
import { describe, expect, it } from "vitest";
import { treeCpuMs } from "../../actors/watch/tree-cpu.ts";

const GONE = 2 ** 22 + 1; // above Linux's highest pid: no such process

describe("treeCpuMs", () => {
  it("is unknown for no process, or for processes that are gone", () => {
    expect(treeCpuMs([])).toBeNull();
    expect(treeCpuMs([GONE])).toBeNull();
  });

  it.runIf(process.platform === "linux")("sums the processes it can read and leaves out those that are gone", () => {
    const own = treeCpuMs([process.pid]);
    expect(own).toBeGreaterThan(0);
    expect(treeCpuMs([process.pid, GONE])).toBeGreaterThanOrEqual(own!);
  });
});
