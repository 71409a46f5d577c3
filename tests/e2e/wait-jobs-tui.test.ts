/**
 * wait_jobs in Pi's real TUI under tmux, through the offline demo model: "checks" starts three checks in one batch and
 * collects them with one wait_jobs call, drawn as one compact band per job (a failure with its last lines) and a
 * summary band; the model's text lines never reach the screen. The screen is polled with deadlines.
 */
import { afterEach, expect, it } from "vitest";
import { startTui, type TuiSession } from "./harness/tmux.ts";

let tui: TuiSession | undefined;
afterEach(async () => {
  await tui?.kill();
  tui = undefined;
});

it("one band per job and a summary band", async () => {
  tui = await startTui({ extensions: ["index.ts", "demo/extension.ts"], args: ["--model", "pi-jobs-demo/scripted-tour", "--metrics-no-footer"], cols: 100, rows: 40 });
  const t = tui;
  await t.waitForPane(/scripted-tour/);
  await t.type("checks");
  await t.waitForPane(/^checks\s*$/m);
  await t.sendKeys("Enter");
  const screen = await t.waitForPane(/\[wait\] 3 jobs: 2 success, 1 failure \(job_\d+ exit 1\)/, 60_000);
  for (const line of screen.split("\n")) expect([...line].length).toBeLessThanOrEqual(100);
  expect(screen).toMatch(/\[wait\] job_\d+ exited 0 · for t in parse format render wrap/);
  expect(screen).toMatch(/\[wait\] job_\d+ exited 1 · sleep 0\.6; echo 'src\/wrap\.ts/);
  // A failed job's band shows its last lines; a successful one is its heading alone.
  expect(screen).toMatch(/^\s*src\/wrap\.ts:14:7  error  prefer-const\s*$/m);
  expect(screen).not.toMatch(/^\s*test result: ok\. 4 passed\s*$/m);
  expect(screen).not.toMatch(/^wait: all_ended/m);
  await t.waitForPane(/One call, one line per check/);
}, 120_000);
