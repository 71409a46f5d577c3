import { visibleWidth } from "@earendil-works/pi-tui";
import { describe, expect, it } from "vitest";
import type { FooterModel } from "../../host/metrics/views.ts";
import { isKnownIdle, sanitizeStatus } from "../../host/metrics/statuses.ts";
import { renderFooter } from "../../host/metrics/footer.ts";

const model = (over: Partial<FooterModel> = {}): FooterModel => ({
  cwd: "~/project",
  gitBranch: "feature/demo",
  sessionName: null,
  model: "provider/model",
  thinkingLevel: "high",
  activity: "settled",
  responseLabel: null,
  ttftMs: 840,
  effTps: 38.4,
  effQualifier: "last",
  obsTps: 42.6,
  inputTokens: 12_000,
  outputTokens: 2100,
  cost: 0.012,
  cacheRead: 8200,
  cacheWrite: 0,
  cacheHit: 0.4,
  contextPercent: 24,
  contextTokens: 48_000,
  contextWindow: 200_000,
  agent: null,
  jobs: null,
  statuses: [],
  warnings: [],
  collapsed: false,
  ...over,
});

describe("metrics footer layout", () => {
  it("expanded at 120 columns: three rows with every group and the collapse button", () => {
    const l = renderFooter(model(), 120);
    expect(l.lines).toHaveLength(3);
    expect(l.lines[0]).toContain("~/project");
    expect(l.lines[0]).toContain("⎇ feature/demo");
    expect(l.lines[0]?.trimEnd().endsWith("[▾ Collapse]")).toBe(true);
    expect(l.lines[1]).toContain("◷ TTFT 840ms obs");
    expect(l.lines[1]).toContain("↯ EFF TPS 38.4 tok/s · last");
    expect(l.lines[1]).toContain("⋯ OBS TPS ≈42.6 tok/s");
    expect(l.lines[1]).toContain("↗ IN 12k ↙ OUT 2.1k");
    expect(l.lines[2]).toContain("◫ CTX ━╌╌╌╌╌ 24.0% · 48k/200k");
    expect(l.lines[2]).toContain("◇ COST $0.012");
    expect(l.lines[2]).toContain("◈ CACHE R 8.2k · W 0 · HIT 40%");
    expect(l.button).not.toBeNull();
    expect(l.lines[0]?.slice(0)).toBeDefined();
  });

  it.each([120, 80, 40, 20])("never exceeds %i columns, expanded or collapsed", (w) => {
    const long = model({ cwd: `~/项目/${"很长的目录/".repeat(8)}😀end`, model: `provider/${"m".repeat(60)}`, statuses: [{ key: "x", text: "busy ".repeat(20) }] });
    for (const collapsed of [false, true]) {
      const l = renderFooter({ ...long, collapsed }, w);
      expect(l.lines.length).toBe(collapsed ? 1 : 3);
      for (const line of l.lines) expect(visibleWidth(line)).toBeLessThanOrEqual(w);
    }
  });

  it("narrow terminals drop less-important groups with … +N and keep performance", () => {
    const l = renderFooter(model(), 40);
    expect(l.lines[1]).toContain("TTFT 840ms");
    expect(l.lines[1]).toMatch(/… \+\d/);
    expect(l.omitted).toBeGreaterThan(0);
    expect(renderFooter(model(), 40).lines[0]).toContain("[▾]");
  });

  it("a long directory keeps its end visible", () => {
    const l = renderFooter(model({ cwd: `~/${"deep/".repeat(30)}the-end` }), 80);
    expect(l.lines[0]).toContain("the-end");
    expect(l.lines[0]).toContain("…");
  });

  it("collapsed: one row, TTFT and TPS first with the same qualifier, then context and model", () => {
    const l = renderFooter(model({ collapsed: true, statuses: [{ key: "a", text: "A-status" }] }), 120);
    expect(l.lines).toHaveLength(1);
    const row = l.lines[0] as string;
    expect(row.indexOf("TTFT 840ms")).toBe(0);
    expect(row).toContain("TPS 38.4 · last");
    expect(row).toContain("◫ CTX 24%");
    expect(row).toContain("provider/model · high");
    expect(row.trimEnd().endsWith("[▸ Expand]")).toBe(true);
    expect(row).not.toContain("OBS"); // the short TPS label is EFF TPS only
  });

  it("collapsed at 40 columns keeps TTFT/TPS ahead of the model and counts what it dropped", () => {
    const row = renderFooter(model({ collapsed: true }), 40).lines[0] as string;
    expect(row).toContain("TTFT 840ms");
    expect(row).toContain("TPS 38.4");
    expect(row).not.toContain("provider/model");
    expect(row).toMatch(/… \+\d/);
  });

  it("high context takes precedence over ordinary groups in a narrow collapsed row", () => {
    const high = renderFooter(model({ collapsed: true, contextPercent: 93 }), 50).lines[0] as string;
    expect(high).toContain("CTX 93%");
    expect(high).not.toContain("provider/model");
  });

  it("labels a response that did not end normally", () => {
    expect(renderFooter(model({ responseLabel: "aborted" }), 120).lines[1]).toContain("◷ TTFT 840ms obs aborted");
    expect(renderFooter(model({ responseLabel: "error", collapsed: true }), 120).lines[0]).toContain("TTFT 840ms error");
  });

  it("warning statuses win over ordinary ones", () => {
    const l = renderFooter(model({ statuses: [{ key: "a", text: "ordinary-status-text" }, { key: "b", text: "build failed" }] }), 70);
    expect(l.lines[2]).toContain("build failed");
    expect(l.lines[2]).not.toContain("ordinary-status-text");
  });

  it("OBS TPS is hidden when not positive; pending/so far qualifiers show", () => {
    expect(renderFooter(model({ obsTps: null }), 120).lines[1]).not.toContain("OBS");
    expect(renderFooter(model({ effTps: null, effQualifier: "pending", activity: "running", ttftMs: null }), 120).lines[1]).toContain("EFF TPS — · pending");
    expect(renderFooter(model({ effQualifier: "so_far" }), 120).lines[1]).toContain("· so far");
    expect(renderFooter(model({ effTps: null, effQualifier: "none" }), 120).lines[1]).toContain("EFF TPS —");
  });

  it("shows the jobs group only while jobs run", () => {
    expect(renderFooter(model({ jobs: { running: 3, linesPerSecond: 1200, bytesPerSecond: 65536, eventLoopDelayP99Ms: 12 } }), 160).lines[1]).toContain("⚙ JOBS 3 · 1.2k l/s · 64.0KiB/s · ELD 12ms");
    expect(renderFooter(model({ jobs: { running: 0, linesPerSecond: 0, bytesPerSecond: 0, eventLoopDelayP99Ms: null } }), 160).lines[1]).not.toContain("JOBS");
  });

  it("the button range matches its columns", () => {
    const l = renderFooter(model(), 100);
    const b = l.button as { start: number; end: number };
    expect(b.end - b.start).toBe(visibleWidth("[▾ Collapse]"));
    expect(b.end).toBeLessThanOrEqual(100);
  });
});

describe("status text", () => {
  it("filters only exact known idle pairs", () => {
    expect(isKnownIdle("lsp", "LSP: idle")).toBe(true);
    expect(isKnownIdle("pi-background-task", "0 bg tasks")).toBe(true);
    expect(isKnownIdle("lsp", "LSP: indexing")).toBe(false);
    expect(isKnownIdle("other", "LSP: idle")).toBe(false);
  });

  it("sanitizes escapes and control characters", () => {
    expect(sanitizeStatus("\u001b[31mred\u001b[0m\nnext\u0007")).toBe("red next");
  });
});
