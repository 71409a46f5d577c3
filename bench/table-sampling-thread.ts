/**
 * The worker of bench/table-sampling.ts: subscribes each job's tree to the portable process table's sampler, as the
 * actor threads of a runtime do, counts the samples each gets, says when the first arrived (its start, the thread's
 * own boot included, is not counted), and answers with this thread's CPU since then when asked to stop.
 */
import { threadCpuUsage } from "node:process";
import { parentPort, workerData } from "node:worker_threads";
import { psTable } from "../shared/process-table/ps-table.ts";

const { tags, leaders } = workerData as { tags: string[]; leaders: number[] };
const cpu = () => {
  const usage = threadCpuUsage();
  return usage.user + usage.system;
};
let rounds = 0;
let members = 0;
let begin = 0;
const samplers = tags.map((tag, i) =>
  psTable.treeSampler({
    tag,
    leader: leaders[i]!,
    spawnedAtEpoch: Date.now(),
    everyMs: 1000,
    probeEveryMs: 0,
    onSample(_at, found) {
      if (i === 0 && begin === 0) {
        begin = cpu();
        parentPort!.postMessage("first");
        return;
      }
      if (i === 0) rounds += 1;
      if (rounds > 0) members += found.length;
    },
  })!,
);
parentPort!.once("message", () => {
  for (const sampler of samplers) sampler.dispose();
  parentPort!.postMessage({ cpuMicros: cpu() - begin, rounds, members });
});
