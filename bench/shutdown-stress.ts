/**
 * `node bench/shutdown-stress.ts [runs]`: burst-then-quit 20 times (by default), 64 jobs each (pipes, PTYs and
 * monitors), the shutdown 50–600 ms into the burst. Prints each run and exits non-zero if any process survived.
 */
import { burstThenShutdown } from "../tests/fixtures/burst.ts";

const runs = Number(process.argv[2] ?? 20);
let leaked = 0;
const durations: number[] = [];
const stops: number[] = [];
for (let run = 1; run <= runs; run += 1) {
  const delayMs = 50 + Math.floor(Math.random() * 551);
  const outcome = await burstThenShutdown({ perKind: 21, delayMs });
  durations.push(outcome.shutdownMs);
  stops.push(outcome.stopMs);
  leaked += outcome.survivors.length > 0 ? 1 : 0;
  console.log(
    `run ${run}: ${outcome.jobs} jobs, shutdown at ${delayMs} ms with ${outcome.runningAtShutdown} running; ` +
      `all stopped in ${Math.round(outcome.stopMs)} ms, shutdown returned in ${Math.round(outcome.shutdownMs)} ms; ` +
      `survivors: ${outcome.survivors.length}`,
  );
}
durations.sort((a, b) => a - b);
stops.sort((a, b) => a - b);
const median = (values: number[]) => Math.round(values[Math.floor(values.length / 2)]!);
console.log(
  `${runs - leaked} of ${runs} runs left no process; all stopped: median ${median(stops)} ms, max ${Math.round(stops.at(-1)!)} ms; ` +
    `shutdown returned: median ${median(durations)} ms, max ${Math.round(durations.at(-1)!)} ms`,
);
process.exit(leaked === 0 ? 0 : 1);
