/**
 * A few cycles of start → quit → adopt with real Pi (tests/stress/persist-cycles.ts, which runs 200 of them): every
 * persisted job's exit code is delivered once, no entry is adopted twice, no ordinary job outlives its Pi, and no
 * keeper or entry is left behind.
 */
import { describe, expect, test } from "vitest";
import { runCycles } from "../stress/persist-cycles.ts";

describe("start → quit → adopt, cycle after cycle", () => {
  test("10 cycles: nothing lost, doubled or left behind", async () => {
    const outcome = await runCycles(10);
    expect(outcome).toMatchObject({
      lostExitCodes: [],
      duplicateReports: [],
      duplicateAdoptions: [],
      survivingOrdinary: [],
      keepersLeft: [],
      entriesLeft: [],
    });
  }, 120_000);
});
