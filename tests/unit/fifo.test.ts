import { describe, expect, it } from "vitest";
import { createFifo, type Fifo } from "../../actors/output/fifo.ts";

const contents = <T>(fifo: Fifo<T>): T[] => Array.from({ length: fifo.length }, (_, i) => fifo.at(i) as T);

describe("fifo", () => {
  it("pushes at the back, reads by position from the front and shifts from the front", () => {
    const fifo = createFifo<string>();
    expect([fifo.length, fifo.at(0)]).toEqual([0, undefined]);
    for (const item of ["a", "b", "c", "d"]) fifo.push(item);
    expect(contents(fifo)).toEqual(["a", "b", "c", "d"]);
    fifo.shift(1);
    expect([fifo.at(0), fifo.at(2), fifo.at(3), fifo.at(-1)]).toEqual(["b", "d", undefined, undefined]);
    fifo.shift(2);
    expect(contents(fifo)).toEqual(["d"]);
    // Shifting more than it holds empties it.
    fifo.shift(5);
    expect(fifo.length).toBe(0);
    fifo.push("e");
    expect(contents(fifo)).toEqual(["e"]);
  });

  it("keeps only the first items", () => {
    const fifo = createFifo<number>();
    for (let i = 0; i < 6; i++) fifo.push(i);
    fifo.shift(2);
    fifo.keep(3);
    expect(contents(fifo)).toEqual([2, 3, 4]);
    fifo.keep(0);
    expect(fifo.length).toBe(0);
  });

  it("stays in order through a long run of pushes and shifts", () => {
    const fifo = createFifo<number>();
    const out: number[] = [];
    let next = 0;
    for (let round = 0; round < 2_000; round++) {
      for (let i = 0; i < 3; i++) fifo.push(next++);
      const take = round % 2 === 0 ? 2 : 3;
      for (let i = 0; i < take && i < fifo.length; i++) out.push(fifo.at(i) as number);
      fifo.shift(take);
    }
    out.push(...contents(fifo));
    expect(out).toEqual(Array.from({ length: next }, (_, i) => i));
  });
});
