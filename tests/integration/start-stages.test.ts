/**
 * A burst reports honest progress, on a real runtime: a burst larger than the threads that may boot at once shows its
 * jobs waiting for a thread and booting, in the job handles and in list_sessions; each job's stage only moves on; and
 * every job of the burst ends up running, with no stage left.
 *
 * The threads load the real actor slowly (tests/fixtures/slow-boot-actor-thread.ts), so a stage lasts long enough to
 * be seen at all; what is asserted does not depend on how long it lasts: the first reading is taken before any event
 * of the pool could have run, the later ones are polled until a deadline.
 */
import { availableParallelism, tmpdir } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import type { SupervisedRuntime } from "../../host/runtime/runtime.ts";
import type { StartStage } from "../../host/runtime/api.ts";
import { listText } from "../../host/shell/result-text.ts";
import { ShellService } from "../../host/shell/service.ts";
import { createShellState } from "../../host/shell/state.ts";
import { closeRuntime, installedRuntime } from "../fixtures/jobs.ts";
import { waitFor } from "./helpers.ts";

const SLOW_BOOT_ENTRY = new URL("../fixtures/slow-boot-actor-thread.ts", import.meta.url);

let runtime: SupervisedRuntime | null = null;
afterEach(async () => {
  if (runtime) await closeRuntime(runtime);
  runtime = null;
});

/** Where a start can be, in the order it goes through them; `running` once its process exists. */
type Where = StartStage | "running";
const ORDER: readonly Where[] = ["waiting_for_thread", "booting", "forking", "running"];

describe("a burst's start stages", () => {
  it("a burst beyond the threads that may boot at once waits for threads, boots them, and every job ends up running", async () => {
    // The pool lets as many threads boot at once as there are cores (host/runtime/pool.ts); no thread is warm beforehand.
    const cores = availableParallelism();
    const burst = cores + 4;
    runtime = installedRuntime({ warm: 0, capacity: burst, actorEntry: SLOW_BOOT_ENTRY });
    const service = new ShellService(createShellState(), { runtime: () => runtime!, killGraceMs: 500 });
    // exec_command starts its job before its first await: the whole burst is started by the end of this line.
    const calls = Array.from({ length: burst }, (_, i) => service.exec({ cmd: "sleep 30", yield_time_ms: 250 }, { toolCallId: `burst-${i}`, cwd: tmpdir() }));
    const jobs = service.state.registry.all().map((session) => session.handle);
    expect(jobs).toHaveLength(burst);

    // Still in the same turn: no thread has reported ready, so exactly `cores` starts were handed to threads and the
    // rest wait in the pool. A handed one may at most have reached its spawn (its thread runs in parallel).
    const first = service.list({});
    const counts = first.starting_counts!;
    expect(counts.waiting_for_thread).toBe(burst - cores);
    expect(counts.booting + counts.forking).toBe(cores);
    expect(first.sessions.every((session) => session.status === "starting" && session.start_stage !== undefined)).toBe(true);
    expect(jobs.slice(cores).every((job) => job.startStage() === "waiting_for_thread")).toBe(true);
    const text = listText(first).split("\n");
    expect(text[1]).toMatch(new RegExp(`^${burst} starting: ${burst - cores} waiting for a thread, `));
    expect(text.find((line) => line.startsWith(`session_id ${burst}:`))).toContain("starting: waiting for a thread (its process does not exist yet)");

    // Each job's stages, as seen until every job runs: a stage only moves on, never back.
    const seen = jobs.map((job): Where[] => [job.startStage() ?? "running"]);
    await waitFor(
      () => {
        for (const [index, job] of jobs.entries()) {
          const stage = job.startStage() ?? "running";
          const stages = seen[index]!;
          if (stages.at(-1) !== stage) stages.push(stage);
        }
        return jobs.every((job) => job.phase() === "running");
      },
      120_000,
      "every job of the burst to run",
    );
    for (const stages of seen) {
      const positions = stages.map((stage) => ORDER.indexOf(stage));
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
      expect(stages.at(-1)).toBe("running");
    }
    // A thread boots for a third of a second at least: some job seen waiting was seen booting once it got one.
    expect(seen.some((stages) => stages[0] === "waiting_for_thread" && stages.includes("booting"))).toBe(true);

    // No job is starting any more: the list says nothing of stages, and the answers that came back were honest.
    const last = service.list({});
    expect(last.starting_counts).toBeUndefined();
    expect(last.sessions.every((session) => session.status === "running" && session.start_stage === undefined)).toBe(true);
    for (const result of await Promise.all(calls)) {
      if (result.status === "starting") expect(result.start_stage).toBeDefined();
      else expect(result.start_stage).toBeUndefined();
    }
    await service.stopAll();
  }, 180_000);
});
