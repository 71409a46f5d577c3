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
    tui = await startTui({ extensions: [FIXTURE], steps: [{ text: ANSWER, delayMs: 600 }], tokensPerSecond: 150, cols: 120, rows: 30 });
    await tui.waitForPane(/\[▾ Collapse\]/);
    await tui.type("go");
    await tui.sendKeys("Enter");
    const done = await tui.waitForPane(/↯ EFF TPS \d+(\.\d)? tok\/s/, 30_000);
    const rows = footerRows(done);
    expect(rows.join("\n")).toMatch(/◷ TTFT \d+(ms|\.\d+s) obs/);
    expect(done).toMatch(/◫ CTX/);
    expect(done).toMatch(/◇ COST \$/);
    expect(done).not.toMatch(/OBS TPS/); // hidden after the response ended
    for (const l of done.split("\n")) expect([...l].length).toBeLessThanOrEqual(120);

    await resize(tui, 80);
    const at80 = await tui.waitForPane(/↯ EFF TPS \d/);
    for (const l of at80.split("\n")) expect([...l].length).toBeLessThanOrEqual(80);

    await resize(tui, 40);
    const at40 = await tui.waitForPane(/\[▾\]/);
    expect(at40).toMatch(/TTFT \d/);
    expect(at40).toMatch(/… \+\d/);
    console.log("AT40\n" + footerRows(at40).join("\n") + "\nAT80\n" + footerRows(at80).join("\n"));
    for (const l of at40.split("\n")) expect([...l].length).toBeLessThanOrEqual(40);

    await resize(tui, 120);
    await tui.type("/metrics footer collapse");
    await tui.sendKeys("Enter");
    const collapsed = await tui.waitForPane(/\[▸ Expand\]/);
    const row = collapsed.split("\n").find((l) => l.includes("[▸ Expand]")) as string;
    console.log("COLLAPSED\n" + row);
    expect(row).toMatch(/^TTFT \d+(ms|\.\d+s)\s+TPS \d+(\.\d)?/);
    expect(collapsed).not.toMatch(/◇ COST/);

    await resize(tui, 40);
    const collapsed40 = await tui.waitForPane(/\[▸\]/);
    expect(collapsed40.split("\n").find((l) => l.includes("[▸]"))).toMatch(/^TTFT \d/);

    await resize(tui, 80);
    await tui.sendKeys("M-m"); // Alt+M toggles back to expanded
    const expanded = await tui.waitForPane(/\[▾ Collapse\]/);
    expect(expanded).toMatch(/◇ COST/);
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
