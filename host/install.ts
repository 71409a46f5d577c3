/**
 * Installs the host actor into one Pi extension instance: the job runtime's life, the delivery of every result owed to
 * the model, the monitor and shell-job tools and wait_jobs over them, the UI (activity rows, /monitor console, sessions picker, transcript bands), the metrics recorder and the
 * small `/jobs` overview. Each part registers its own hooks; this file only wires them together, in the order their
 * session_start handlers must run (the instance's life first, because the other parts adopt their state from it after
 * /reload; the delivery before the tools whose results it keeps; the UI after the tools whose services it reads).
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { createJobRateSampler } from "./runtime/job-rates.ts";
import { installInstanceLife } from "./session/instance-life.ts";
import { installMetrics } from "./metrics/install.ts";
import { installMonitors } from "./monitor/install.ts";
import { createSampler } from "./sampler.ts";
import { installShellJobs } from "./shell/install.ts";
import { endsDelivered, stillStuck } from "./shell/alerts.ts";
import { installDelivery } from "./delivery/install.ts";
import { installWaitJobs } from "./wait/install.ts";
import { installUi } from "./console/install.ts";
import { jobsOverview } from "./console/views.ts";

export function installHost(pi: ExtensionAPI): void {
  const life = installInstanceLife(pi);
  const delivery = installDelivery(pi, life, {
    stillStuck: (alert) => stillStuck(shell.service.state, alert),
    delivered: (names) => endsDelivered(shell.service.state, names),
  });
  const monitors = installMonitors(pi, life, delivery);
  const shell = installShellJobs(pi, life, delivery);
  installWaitJobs(pi, { shell: () => shell.service, monitors: monitors.service, ledger: delivery.ledger, due: () => delivery.scheduler.schedule() });
  installUi(pi, { life, monitors: monitors.service, shell: () => shell.service });
  // One 250 ms sampler for the host actor: the metrics recorder and the job-runtime figures share it.
  const rates = createJobRateSampler(() => life.runtime());
  installMetrics(pi, { sampler: createSampler(250), jobRates: () => rates.sample() });
  pi.on("session_start", () => rates.start());
  pi.on("session_shutdown", () => rates.stop());
  pi.registerCommand("jobs", {
    description: "List the background jobs of this session (monitors and shell jobs)",
    handler: async (_args, ctx) => {
      ctx.ui.notify(jobsOverview(life.runtime().list()), "info");
    },
  });
}
