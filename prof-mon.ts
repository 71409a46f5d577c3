import { installedRuntime, closeRuntime, monitorRequest, jobRequest } from "./tests/fixtures/jobs.ts";
const runtime = installedRuntime();
const kind = process.argv[2];
for (let i = 0; i < 6; i++) {
  const t = performance.now();
  const req = kind === "monitor" ? monitorRequest("seq 1 2000000; echo __DONE__", { contract: { resultPattern: "^__DONE__$", failurePattern: null, completion: "match" } }) : jobRequest("seq 1 2000000; echo __DONE__");
  const r = await runtime.start(req).done;
  console.log(kind, (performance.now() - t).toFixed(1), r.cause);
}
await closeRuntime(runtime);
