/**
 * How a starting job's stage (StartStage, mailbox/lifecycle.ts) is said, once for every place that says it: the shell
 * tools' answers to the model, the /monitor console, the sessions picker and the `/jobs` overview. A burst of starts
 * then reads the same everywhere: `starting: waiting for a thread` per job, and one line that counts them. In shared/
 * because the model hears these words: the host's answers must not take them from the UI. Pure.
 */
import type { StartStage } from "../mailbox/lifecycle.ts";

export const START_STAGE_WORDS: Readonly<Record<StartStage, string>> = {
  waiting_for_thread: "waiting for a thread",
  booting: "booting",
  forking: "forking",
};

/** The stages in the order a start goes through them, which is the order the summary counts them in. */
export const START_STAGES: readonly StartStage[] = ["waiting_for_thread", "booting", "forking"];

/** How many starting jobs are in each stage. */
export type StartingCounts = Record<StartStage, number>;

export function startingCounts(stages: Iterable<StartStage | null | undefined>): StartingCounts {
  const counts: StartingCounts = { waiting_for_thread: 0, booting: 0, forking: 0 };
  for (const stage of stages) if (stage) counts[stage] += 1;
  return counts;
}

/** `starting: waiting for a thread`: a starting job's status with the reason it is still starting. */
export function startingStatus(stage: StartStage): string {
  return `starting: ${START_STAGE_WORDS[stage]}`;
}

/** `12 starting: 5 waiting for a thread, 4 booting, 3 forking` (stages with none left out); null when none starts. */
export function startingSummary(counts: StartingCounts): string | null {
  const total = START_STAGES.reduce((sum, stage) => sum + counts[stage], 0);
  if (total === 0) return null;
  const parts = START_STAGES.filter((stage) => counts[stage] > 0).map((stage) => `${counts[stage]} ${START_STAGE_WORDS[stage]}`);
  return `${total} starting: ${parts.join(", ")}`;
}

/** What a row of a job shows its start with: its status, and the stage while it starts (JobView's, or a handle's). */
export interface ShownStart {
  /** Any tool's status word for the job (ui/views.ts, JobView's `status`); only `starting` is told apart here. */
  status: string;
  startStage?: StartStage | null;
}

/** A job's status as a row shows it: a starting job says why it is still starting. */
export function shownStatus(job: ShownStart): string {
  return job.status === "starting" && job.startStage ? startingStatus(job.startStage) : job.status;
}

/** The summary of the jobs' starts for a title line, or null when none is starting. */
export function startingOf(jobs: readonly ShownStart[]): string | null {
  return startingSummary(startingCounts(jobs.map((job) => (job.status === "starting" ? job.startStage : null))));
}
