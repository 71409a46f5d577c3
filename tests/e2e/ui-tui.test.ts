/**
 * The UI in Pi's real TUI under tmux, driven through the offline demo model like a newcomer would: start a shell
 * job and a monitor, watch the activity rows, open /monitor, move the selection, show output, stop one job with x,
 * close with q. The same console at 80×24 and 40×6. Screens are polled with deadlines.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startTui, type TuiSession } from "./harness/tmux.ts";
import { pollUntil } from "./harness/wait.ts";

const EXTENSIONS = ["index.ts", "demo/extension.ts"];
// Pi's own footer (it names the model, which says the TUI is ready); the metrics footer has its own tmux tests.
const DEMO = ["--model", "pi-jobs-demo/scripted-tour", "--metrics-no-footer"];

let tui: TuiSession | undefined;

afterEach(async () => {
  await tui?.kill();
  tui = undefined;
});

function fitsWidth(screen: string, cols: number): void {
  for (const line of screen.split("\n")) expect([...line].length).toBeLessThanOrEqual(cols);
}

async function startBackgroundJobs(t: TuiSession, rows: number): Promise<void> {
  await t.waitForPane(/scripted-tour/);
  await t.type("background");
  await t.waitForPane(/^background\s*$/m);
  await t.sendKeys("Enter");
  if (rows >= 12) {
    // One activity row per running job.
    await t.waitForPane(/monitor · dev server log/, 30_000);
    await t.waitForPane(/shell · i=0; while true/);
  } else {
    // Pi gives a six-row terminal's rows to the editor and footer (the one-row activity budget is pinned by the
    // render tests); the start band says the second job is up.
    await t.waitForPane(/started · dev server log/, 30_000);
  }
}

async function openConsole(t: TuiSession): Promise<string> {
  await t.type("/monitor");
  await t.sendKeys("Enter");
  // The console's footer is painted last: a capture taken before it may hold a half-drawn frame.
  return t.waitForPane(/Jobs · 2 running[\s\S]*\? help/);
}

describe("pi-jobs UI in the TUI", () => {
  // The whole tour runs real jobs one after another: on a loaded machine it outlasts the default test timeout.
  it("the tour's shell jobs are compact rows: outcome, command and output lines, never the model's metadata", async () => {
    // Tall enough that the whole tour stays on the screen.
    tui = await startTui({ extensions: EXTENSIONS, args: DEMO, cols: 100, rows: 60 });
    const t = tui;
    await t.waitForPane(/scripted-tour/);
    await t.type("show me");
    await t.sendKeys("Enter");
    const screen = await t.waitForPane(/That is the tour/, 180_000);
    fitsWidth(screen, 100);
    expect(screen).toMatch(/\[shell\] running · node -i · session \d+ · ctrl\+o to expand/);
    // The REPL's answer as a person reads it, without its colour codes.
    expect(screen).toMatch(/^\s*\[ 7, 14, 21 \]\s*$/m);
    expect(screen).toMatch(/\[shell\] exited 0 · node -i · /);
    expect(screen).toMatch(/\[shell\] wake · 1 job finished/);
    expect(screen).not.toMatch(/^\s*(supervision|wait|log_path|elapsed_ms):/m);
    expect(screen).not.toMatch(/Process running with session_id/);
    expect(screen).not.toMatch(/\\(e|x1b)\[/);
  }, 240_000);

  it("console at 80×24: select, show output, stop one with x, close with q", async () => {
    tui = await startTui({ extensions: EXTENSIONS, args: DEMO, cols: 80, rows: 24 });
    const t = tui;
    await startBackgroundJobs(t, 24);
    await openConsole(t);
    // On a busy machine the selected job may still be starting when the console opens; it redraws once it runs.
    const opened = await t.waitForPane(/▸ running · shell · i=0[\s\S]*\? help/);
    fitsWidth(opened, 80);
    expect(opened).toMatch(/▸ running · shell · i=0/);
    expect(opened).toMatch(/Output: hidden · Enter shows it/);
    expect(opened).toMatch(/\? help/);

    await t.sendKeys("Down");
    await t.waitForPane(/▸ running · monitor · dev server log/);
    // Live figures the seeds do not have: rates, retention and the process tree's CPU and memory.
    await t.waitForPane(/Process tree: \d+ process(es)? · CPU [\d.]+% \([\d.]+ s\) · memory [\d.]+ (KiB|MiB)/);
    await t.waitForPane(/Process group: \d+/);
    // A rate needs a second of samples; the 250 ms refresh brings it without a key press.
    const moved = await t.waitForPane(/Output rate: [\d.]+ lines\/s · [\d.]+ (B|KiB)\/s/);
    expect(moved).toMatch(/Name: dev server log/);

    await t.sendKeys("Enter");
    await t.waitForPane(/Output: \d+ retained lines/);
    // The live refresh keeps the retained output moving while the console is open.
    await t.sendKeys("End");
    await t.waitForPane(/\[stdout\] GET \/api\/items\/\d+ 200/);

    await t.sendKeys("x");
    const stopped = await t.waitForPane(/stopped monitor_1/, 30_000);
    expect(stopped).toMatch(/▸ stopped · monitor · dev server log/);
    expect(stopped).toMatch(/Jobs · 1 running · 1 finished/);

    await t.sendKeys("?");
    await t.waitForPane(/Help · \? or q back/);
    await t.sendKeys("q");
    await t.waitForPane(/Jobs · 1 running/);
    await t.sendKeys("q");
    const closed = await pollUntil(
      async () => {
        const screen = await t.capture();
        return !/Jobs · \d+ running/.test(screen) && /shell · i=0/.test(screen) ? screen : undefined;
      },
      { what: "the console to close" },
    );
    expect(closed).not.toMatch(/monitor · dev server log · \d/);
    // The remaining job still runs; stop it from the picker so the session ends clean.
    await t.type("/shell-jobs-sessions");
    await t.sendKeys("Enter");
    await t.waitForPane(/Shell jobs · 1 running/);
    await t.sendKeys("x");
    await t.waitForPane(/Stop session \d+\? y to stop/);
    await t.sendKeys("y");
    await t.waitForPane(/stopped shell job \d+/, 30_000);
    await t.sendKeys("Escape");
  });

  it("the same console fits 40×6", async () => {
    tui = await startTui({ extensions: EXTENSIONS, args: DEMO, cols: 40, rows: 6 });
    const t = tui;
    await startBackgroundJobs(t, 6);
    await openConsole(t);
    // On a busy machine the selected job may still be starting when the console opens; it redraws once it runs.
    const opened = await t.waitForPane(/▸ running[\s\S]*\? help/);
    fitsWidth(opened, 40);
    const lines = opened.replace(/\n+$/, "").split("\n");
    expect(lines.length).toBeLessThanOrEqual(6);
    expect(opened).toMatch(/▸ running/);
    expect(opened).toMatch(/\? help/);
    await t.sendKeys("a");
    await t.waitForPane(/stopped 2 jobs/, 30_000);
    await t.sendKeys("q");
    await pollUntil(async () => !/Jobs ·/.test(await t.capture()), { what: "the console to close" });
  });
});
