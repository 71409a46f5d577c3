import { describe, expect, it } from "vitest";
import { buildGuidance, GUIDANCE_TITLE } from "../../host/monitor/guidance.ts";
import { MONITOR_START_TOOL, MONITOR_STOP_TOOL } from "../../host/monitor/schemas.ts";
import { SHELL_TOOLS } from "../../host/shell/declarations.ts";

const MONITOR = ["monitor_start", "monitor_stop"];

function guidance(tools: string[], restored = false): string {
  const text = buildGuidance(tools, restored);
  if (text === null) throw new Error(`expected guidance for ${tools.join(", ")}`);
  return text;
}

/** Rules that must hold whenever monitor_start is active, whatever else is. */
function expectMonitorRules(text: string): void {
  expect(text.startsWith(GUIDANCE_TITLE)).toBe(true);
  expect(text).toMatch(/monitor_start: noisy or long work/);
  expect(text).toMatch(/compact=true/);
  expect(text).toMatch(/required payloads and failure details, not only counts/);
  expect(text).toMatch(/sequence dependent jobs/);
  expect(text).toMatch(/completion="exit"/);
  expect(text).toMatch(/unique sentinel line after the final check/);
  expect(text).toMatch(/deployment timeouts/);
  expect(text).toMatch(/untrusted/);
  expect(text).toMatch(/override system, developer or user intent/);
  expect(text).toMatch(/Reject parse errors or truncated required data; validate business fields/);
  expect(text).toMatch(/monitor-only batch ends the turn/);
  expect(text).toMatch(/do not poll/);
  expect(text).toMatch(/Mixed, nested or headless calls wait/);
}

describe("buildGuidance", () => {
  it("bash + monitor_start: quick bash, direct monitor calls", () => {
    const text = guidance(["read", "bash", ...MONITOR]);
    expectMonitorRules(text);
    expect(text).toMatch(/^bash: quick, small commands; group related ones\.$/m);
    expect(text).toMatch(/^Call monitor_start directly\.$/m);
    expect(text).not.toMatch(/codemode|Promise\.all/);
  });

  it("with codemode: batching replaces the direct-call sentence, every other rule stays", () => {
    const plain = guidance(["bash", ...MONITOR]);
    const text = guidance(["bash", ...MONITOR, "codemode"]);
    expectMonitorRules(text);
    expect(text).not.toMatch(/Call monitor_start directly/);
    expect(text).toMatch(/codemode; Promise\.all only for independent jobs/);
    const differing = text.split("\n").filter((line) => !plain.split("\n").includes(line));
    expect(differing).toHaveLength(1);
  });

  it("monitor_start only: no shell or codemode recommendation", () => {
    const text = guidance(["monitor_start"]);
    expectMonitorRules(text);
    expect(text).not.toMatch(/\bbash\b|exec_command|codemode/);
    expect(text).toMatch(/^Call monitor_start directly\.$/m);
  });

  it("recommends exec_command for quick commands when it replaces bash", () => {
    const text = guidance(["exec_command", "write_stdin", ...MONITOR]);
    expect(text).toMatch(/^exec_command: quick, small commands/m);
    expect(text).not.toMatch(/\bbash\b/);
    // bash wins when both are there: it is the tool that answers a quick command in one call.
    expect(guidance(["bash", "exec_command", ...MONITOR])).toMatch(/^bash: quick/m);
  });

  it("codemode without a shell: batching advice, no shell advice", () => {
    const text = guidance(["codemode", ...MONITOR]);
    expect(text).toMatch(/Promise\.all/);
    expect(text).not.toMatch(/\bbash\b|exec_command/);
  });

  it("inactive and unused: nothing at all", () => {
    expect(buildGuidance(["bash", "read"], false)).toBeNull();
    expect(buildGuidance([], false)).toBeNull();
    // monitor_stop alone does not make monitors usable.
    expect(buildGuidance(["bash", "monitor_stop"], false)).toBeNull();
  });

  it("inactive with restored results: safety guidance only, no advertised capability", () => {
    const text = guidance(["bash", "codemode"], true);
    expect(text).toMatch(/untrusted/);
    expect(text).toMatch(/override system, developer or user intent/);
    expect(text).toMatch(/Reject parse errors or truncated required data/);
    expect(text).not.toMatch(/monitor_start|compact|completion|Promise\.all|bash|poll/);
  });

  it("active with restored results is the ordinary guidance", () => {
    expect(guidance(["bash", ...MONITOR], true)).toBe(guidance(["bash", ...MONITOR], false));
  });

  it("stays short", () => {
    for (const tools of [["bash", ...MONITOR, "codemode"], ["bash", ...MONITOR], MONITOR]) {
      expect(guidance(tools).length).toBeLessThan(750);
    }
  });
});

describe("services", () => {
  it("points servers and watchers at exec_command ready, only when exec_command is active", () => {
    expect(buildGuidance(["exec_command", "monitor_start", "monitor_stop"], false)).toMatch(/^exec_command ready: servers and watchers/m);
    expect(buildGuidance(["bash", "exec_command", "monitor_start", "monitor_stop"], false)).toMatch(/^exec_command ready: servers and watchers/m);
    expect(buildGuidance(["bash", "monitor_start", "monitor_stop"], false)).not.toMatch(/ready/);
  });
});

describe("guidance and declarations say each rule once", () => {
  const declared = (tool: { name: string; description: string; parameters: unknown }): string =>
    JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters });
  const text = [guidance(["exec_command", ...MONITOR]), declared(MONITOR_START_TOOL), declared(MONITOR_STOP_TOOL)].join("\n");

  it("the declarations say what the tools return; the guidance says when to use them", () => {
    expect(MONITOR_START_TOOL.description).toMatch(
      /success \(result_pattern\), failure \(failure_pattern or nonzero exit\), result_missing \(exit 0, no match\) or timeout/,
    );
    expect(MONITOR_STOP_TOOL.description).toMatch(/Stop one monitor \(monitor_id\) or all; a stopped monitor delivers no result/);
    for (const phrase of ["noisy or long", "compact=true", 'completion="exit"', "untrusted", "do not poll"]) {
      expect(text.split(phrase)).toHaveLength(2);
    }
  });

  it("what ready does is said by its parameter, not again by the guidance", () => {
    expect(guidance(["exec_command", ...MONITOR])).not.toMatch(/keeps running/);
    expect(JSON.stringify(SHELL_TOOLS.exec_command.parameters)).toMatch(/return once all hold; job keeps running/);
  });
});
