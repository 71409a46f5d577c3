/**
 * The metrics footer in Pi's real TUI under tmux: expanded (three rows) and collapsed (one row) at 120, 80 and
 * 40 columns, toggled by command and by Alt+M, and the --metrics-no-footer opt-out. Screens are polled with
 * deadlines, never read after a fixed sleep.
 */
import { execFile } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { startTui, type TuiSession } from "./harness/tmux.ts";
import { pollUntil } from "./harness/wait.ts";

const FIXTURE = "tests/fixtures/metrics-extension.ts";
const OTHER_FOOTER = "tests/fixtures/metrics-other-footer.ts";
const ANSWER = "streamed answer text ".repeat(20);

let tui: TuiSession | undefined;

afterEach(async () => {
  await tui?.kill();
  tui = undefined;
});

function resize(t: TuiSession, cols: number): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile("tmux", ["-L", t.socket, "resize-window", "-t", t.target, "-x", String(cols)], { timeout: 10_000 }, (e) => (e ? reject(e) : resolve())),
  );
}

/** The last lines of the screen that belong to the footer, found from its first row (the directory row). */
function footerRows(screen: string): string[] {
  const lines = screen.replace(/\n+$/, "").split("\n");
  const perf = lines.findLastIndex((l) => /TTFT/.test(l));
  return perf < 0 ? [] : lines.slice(Math.max(0, perf - 1));
}

describe("metrics footer in the TUI", () => {
  it("shows TTFT and EFF TPS after a streamed answer, expanded and collapsed, at 120, 80 and 40 columns", async () => {
    tui = await startTui({ extensions: [FIXTURE], steps: [{ text: ANSWER, delayMs: 600 }], tokensPerSecond: 60, cols: 120, rows: 30 });
    await tui.waitForPane(/\[▾ Collapse\]/);
    await tui.type("go");
    await tui.sendKeys("Enter");
    // While the answer streams (about 1.7 s at 60 tok/s), the live observed rate shows.
    const streaming = await tui.waitForPane(/⋯ OBS TPS ≈\d/, 30_000);
    expect(streaming).toMatch(/EFF TPS — · pending/);
    const done = await tui.waitForPane(/↯ EFF TPS \d+(\.\d)? tok\/s/, 30_000);
    const rows = footerRows(done);
    expect(rows).toHaveLength(3);
    expect(rows[0]).toMatch(/\[▾ Collapse\]$/);
    expect(rows.join("\n")).toMatch(/◷ TTFT \d+(ms|\.\d+s) obs/);
    expect(done).toMatch(/◫ CTX/);
    expect(done).toMatch(/◇ COST \$/);
    expect(done).not.toMatch(/OBS TPS/); // hidden after the response ended
    for (const l of done.split("\n")) expect([...l].length).toBeLessThanOrEqual(120);

    await resize(tui, 80);
    // tmux crops the old 120-column screen at once: the button reappearing means Pi redrew at 80 columns.
    const at80 = await tui.waitForPane(/\[▾ Collapse\][\s\S]*↯ EFF TPS \d/);
    for (const l of at80.split("\n")) expect([...l].length).toBeLessThanOrEqual(80);

    await resize(tui, 40);
    const at40 = await tui.waitForPane(/\[▾\]/);
    expect(at40).toMatch(/TTFT \d/);
    expect(at40).toMatch(/… \+\d/);
    for (const l of at40.split("\n")) expect([...l].length).toBeLessThanOrEqual(40);

    await resize(tui, 120);
    await tui.type("/metrics footer collapse");
    await tui.sendKeys("Enter");
    const collapsed = await tui.waitForPane(/\[▸ Expand\]/);
    const row = collapsed.split("\n").find((l) => l.includes("[▸ Expand]")) as string;
    expect(row).toMatch(/^TTFT \d+(ms|\.\d+s)\s+TPS \d+(\.\d)?/);
    expect(collapsed.replace(/\n+$/, "").split("\n").at(-1)).toBe(row); // one row, at the bottom
    expect(collapsed).not.toMatch(/◇ COST/);

    await resize(tui, 40);
    const collapsed40 = await tui.waitForPane(/\[▸\]/);
    expect(collapsed40.split("\n").find((l) => l.includes("[▸]"))).toMatch(/^TTFT \d/);

    await resize(tui, 80);
    await tui.sendKeys("M-m"); // Alt+M toggles back to expanded
    const expanded = await tui.waitForPane(/\[▾ Collapse\]/);
    expect(expanded).toMatch(/◇ COST/);

    // Fullscreen Pi captures the mouse: a click on the button collapses (SGR mouse report, 1-based cells).
    const lines = expanded.split("\n");
    const y = lines.findIndex((l) => l.includes("[▾ Collapse]"));
    const x = [...(lines[y] as string)].join("").indexOf("[▾ Collapse]") + 3;
    await tui.type(`\u001b[<0;${x + 1};${y + 1}M\u001b[<0;${x + 1};${y + 1}m`);
    await tui.waitForPane(/\[▸ Expand\]/);
  });

  it("/metrics details opens Pi's editor read-only; cancelling sends nothing", async () => {
    tui = await startTui({ extensions: [FIXTURE], cols: 100, rows: 40 });
    await tui.waitForPane(/\[▾ Collapse\]/);
    await tui.type("/metrics details");
    await tui.sendKeys("Enter");
    const screen = await tui.waitForPane(/Metrics details \(edits are discarded\)/);
    expect(screen).toMatch(/Extension statuses \(all, including hidden idle states\)/);
    await tui.sendKeys("Escape");
    await pollUntil(async () => !/Metrics details \(edits are discarded\)/.test(await tui?.capture() ?? ""), { what: "the details editor to close" });
    expect(await tui.capture()).not.toMatch(/No more faux responses|Error/);
    // Submitting (Enter) discards the text as well: no prompt reaches the model (which has no answers queued).
    await tui.type("/metrics details");
    await tui.sendKeys("Enter");
    await tui.waitForPane(/Metrics details \(edits are discarded\)/);
    await tui.sendKeys("Enter");
    await pollUntil(async () => !/Metrics details \(edits are discarded\)/.test(await tui?.capture() ?? ""), { what: "the details editor to close" });
    await tui.type("/metrics footer toggle");
    await tui.sendKeys("Enter");
    const after = await tui.waitForPane(/\[▸ Expand\]/); // a later command runs: the session was idle, nothing was sent
    expect(after).not.toMatch(/No more faux responses|Error/);
  });

  it("never fights another extension for the footer slot; shows job figures while jobs run", async () => {
    tui = await startTui({ extensions: [FIXTURE, OTHER_FOOTER], cols: 120, rows: 24, env: { PI_METRICS_FAKE_JOBS: "1" } });
    const t = tui;
    const first = await t.waitForPane(/⚙ JOBS 2 · 1\.5k l\/s · 4\.0KiB\/s · ELD 3ms/);
    // Known-idle statuses are hidden, a failing one is shown (sanitized).
    expect(first).toMatch(/build failed/);
    expect(first).not.toMatch(/LSP: idle/);
    await t.type("/other-footer");
    await t.sendKeys("Enter");
    await t.waitForPane(/OTHER-FOOTER-MARKER/);
    // Collapse/expand and off do not touch a footer Metrics no longer owns.
    for (const cmd of ["/metrics footer collapse", "/metrics footer off"]) {
      await t.type(cmd);
      await t.sendKeys("Enter");
      await pollUntil(async () => !(await t.capture()).includes(cmd), { what: `${cmd} to run` });
      expect(await t.capture()).toMatch(/OTHER-FOOTER-MARKER/);
    }
    await t.sendKeys("M-m");
    expect(await t.capture()).toMatch(/OTHER-FOOTER-MARKER/);
    // Only an explicit `on` reclaims it, keeping the chosen (collapsed) layout.
    await t.type("/metrics footer on");
    await t.sendKeys("Enter");
    const mine = await t.waitForPane(/\[▸ Expand\]/);
    expect(mine).not.toMatch(/OTHER-FOOTER-MARKER/);
  });

  it("--metrics-no-footer keeps Pi's footer; /metrics footer on claims it and off gives it back", async () => {
    tui = await startTui({ extensions: [FIXTURE], args: ["--metrics-no-footer"], cols: 100, rows: 24 });
    const t = tui;
    // Pi's own footer is drawn; ours is not.
    await pollUntil(async () => !/Collapse\]/.test(await t.capture()) && /faux/.test(await t.capture()), { what: "Pi's built-in footer" });
    await t.type("/metrics footer on");
    await t.sendKeys("Enter");
    await t.waitForPane(/\[▾ Collapse\]/);
    await t.type("/metrics footer off");
    await t.sendKeys("Enter");
    await pollUntil(async () => !/Collapse\]/.test(await t.capture()), { what: "the Metrics footer to go away" });
  });
});
