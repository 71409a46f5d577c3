/**
 * One job's lifecycle (mailbox/lifecycle.ts): the cell stores each phase as its number and reads it back, the host's
 * phase and a start's stage follow from the table, and the shell tools and the console say what the table says of a
 * live job.
 */
import { describe, expect, it } from "vitest";
import { createJobCell, JobCellReader, JobCellWriter } from "../../mailbox/cell.ts";
import {
  jobPhase,
  LIFECYCLE,
  liveStatus,
  livePhaseOf,
  PHASES,
  phaseCode,
  phaseOfCode,
  startStageOf,
  type Phase,
} from "../../mailbox/lifecycle.ts";
import { deriveSupervision, statusOf } from "../../host/shell/supervision.ts";
import type { JobState } from "../../host/runtime/api.ts";

const ACTOR_PHASES: Exclude<Phase, "cancelled">[] = ["starting", "spawning", "running", "stopping", "ended"];

describe("the lifecycle table", () => {
  it("numbers every phase once, `starting` as 0 (a new cell's zeroed word), and reads an unknown number as starting", () => {
    expect(PHASES.map(phaseCode)).toEqual([0, 1, 2, 3, 4, 5]);
    for (const phase of PHASES) expect(phaseOfCode(phaseCode(phase))).toBe(phase);
    expect(phaseCode("starting")).toBe(0);
    expect(phaseOfCode(99)).toBe("starting");
    expect(phaseOfCode(-1)).toBe("starting");
    expect(Object.keys(LIFECYCLE).sort()).toEqual([...PHASES].sort());
  });

  it("the cell stores what the actor writes and the host's cancel, and reads them back", () => {
    const buffer = createJobCell();
    const reader = new JobCellReader(buffer);
    const writer = new JobCellWriter(buffer);
    expect(reader.state()).toBe("starting");
    for (const phase of ACTOR_PHASES) {
      writer.setState(phase);
      expect(reader.state()).toBe(phase);
    }
    const cancelled = new JobCellReader(createJobCell());
    expect(cancelled.cancel()).toBe(true);
    expect(cancelled.state()).toBe("cancelled");
  });

  it("gives the host `running` exactly from the spawn's publication on, and `ended` only with the result", () => {
    const hostPhases = Object.fromEntries(PHASES.map((phase) => [phase, jobPhase(phase, false)]));
    expect(hostPhases).toEqual({
      starting: "starting",
      spawning: "starting",
      running: "running",
      stopping: "running",
      ended: "running",
      cancelled: "starting",
    });
    for (const phase of PHASES) expect(jobPhase(phase, true)).toBe("ended");
  });

  it("says where a start is: the pool's stage before the claim, forking inside spawn, none past it", () => {
    expect(startStageOf("starting", () => true)).toBe("waiting_for_thread");
    expect(startStageOf("starting", () => false)).toBe("booting");
    const asked: Phase[] = [];
    const pool = (phase: Phase) => () => {
      asked.push(phase);
      return true;
    };
    expect(startStageOf("spawning", pool("spawning"))).toBe("forking");
    for (const phase of ["running", "stopping", "ended", "cancelled"] as const) expect(startStageOf(phase, pool(phase))).toBeNull();
    expect(asked, "the pool is asked only before the claim").toEqual([]);
  });

  it("names a live job by its phase, `stopping` once a stop was asked for; an unsettled ended job reads running", () => {
    expect(liveStatus("starting", false)).toBe("starting");
    expect(liveStatus("running", false)).toBe("running");
    expect(liveStatus("starting", true)).toBe("stopping");
    expect(liveStatus("running", true)).toBe("stopping");
    expect(livePhaseOf("starting")).toBe("starting");
    expect(livePhaseOf("running")).toBe("running");
    expect(livePhaseOf("ended")).toBe("running");
  });

  it("is what the shell tools say of a live job: the status keeps the phase, the supervision says stopping", () => {
    for (const phase of ["starting", "running"] satisfies Exclude<JobState["phase"], "ended">[]) {
      for (const stopBy of [null, "tool", "session_shutdown"] as const) {
        const job: JobState = { phase, stopBy };
        expect(statusOf(job, 1000)).toBe(phase);
        const supervision = deriveSupervision({
          job,
          timeoutMs: 1000,
          deadlineEpochMs: null,
          lastActivityEpochMs: 0,
          nowEpochMs: 0,
          logBytes: 0,
          logTruncated: false,
        });
        expect(supervision.state).toBe(liveStatus(phase, stopBy !== null));
      }
    }
  });
});
