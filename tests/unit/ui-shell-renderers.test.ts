/**
 * The shell renderers as Pi calls them: a call row while the call runs, then the result row alone, drawn from the
 * stored `details` only (what a reloaded or restored session has); the wake message from its details.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import type { Component } from "@earendil-works/pi-tui";
import { stripTerminalSequences } from "@earendil-works/pi-tui";
import type { Theme } from "@earendil-works/pi-coding-agent";
import { beforeAll, describe, expect, it } from "vitest";
import { SHELL_TOOL_NAMES } from "../../host/shell/install.ts";
import { WAKE_MESSAGE_TYPE } from "../../host/delivery/wake-text.ts";
import { processResultText } from "../../host/shell/result-text.ts";
import { registerShellRenderers } from "../../host/console/shell-renderers.ts";
import { exitedResult, killResult, processResult, WAKE } from "../fixtures/shell-results.ts";
import { piTheme } from "../fixtures/ui-vterm.ts";

type Renderers = { renderShell: string; renderCall: (...a: unknown[]) => Component; renderResult: (...a: unknown[]) => Component };
type Resolver = (toolName: string, next: () => unknown) => unknown;
type MessageRenderer = (message: { details?: unknown }, options: Record<string, unknown>, theme: Theme) => Component | undefined;

let theme: Theme;
let resolver: Resolver;
const messageRenderers = new Map<string, MessageRenderer>();

beforeAll(() => {
  theme = piTheme("dark");
  const pi = {
    registerToolRenderer: (r: Resolver) => {
      resolver = r;
    },
    registerMessageRenderer: (type: string, r: MessageRenderer) => messageRenderers.set(type, r),
  } as unknown as ExtensionAPI;
  registerShellRenderers(pi);
});

const context = (over: Record<string, unknown> = {}) => ({
  expanded: false,
  isError: false,
  isPartial: true,
  lastComponent: undefined,
  keyText: () => "ctrl+o",
  ...over,
});
const plain = (component: Component, width = 100): string[] => component.render(width).map((line) => stripTerminalSequences(line).trim());

describe("shell renderers", () => {
  it("claim the five shell tools and nothing else", () => {
    for (const name of SHELL_TOOL_NAMES) expect((resolver(name, () => "next") as Renderers).renderShell).toBe("self");
    expect(resolver("monitor_start", () => "next")).toBe("next");
  });

  it("a call row while the call runs, then only the result row, drawn from details alone", () => {
    const renderers = resolver("exec_command", () => null) as Renderers;
    const args = { cmd: "node -i", tty: true, yield_time_ms: 1500 };
    expect(plain(renderers.renderCall(args, theme, context()))).toEqual(["[shell] starting · node -i · ctrl+o to expand"]);
    const done = context({ isPartial: false });
    expect(plain(renderers.renderCall(args, theme, done))).toEqual([]);
    // As after a restore: the content is the model's text, the row comes from details.
    const stored = processResult();
    const row = plain(renderers.renderResult({ content: [{ type: "text", text: processResultText(stored) }], details: stored }, { expanded: false, isPartial: false }, theme, done));
    expect(row).toEqual(["[shell] running · node -i · session 1 · ctrl+o to expand", "Welcome to Node.js v22.23.3.", 'Type ".help" for more information.', ">"]);
    const expanded = plain(renderers.renderResult({ content: [], details: exitedResult(1) }, { expanded: true, isPartial: false }, theme, done));
    expect(expanded[0]).toBe("[shell] exited 1 · npm test · 12.4s");
    expect(expanded).toContain("Log path: /tmp/pi-jobs-abc/job_3");
  });

  it("an error result is one error row; details that are not a shell result draw nothing", () => {
    const renderers = resolver("write_stdin", () => null) as Renderers;
    const error = plain(renderers.renderResult({ content: [{ type: "text", text: "write_stdin: unknown session_id 9" }] }, { expanded: false, isPartial: false }, theme, context({ isPartial: false, isError: true })));
    expect(error).toEqual(["[shell] error · write_stdin: unknown session_id 9"]);
    expect(plain(renderers.renderResult({ content: [], details: { something: "else" } }, { expanded: false, isPartial: false }, theme, context({ isPartial: false })))).toEqual([]);
  });

  it("results stored before this version (no command on kill_session, no output_rendered) still draw", () => {
    const kill = resolver("kill_session", () => null) as Renderers;
    const { cmd: _cmd, ...older } = killResult();
    const lines = plain(kill.renderResult({ content: [], details: older }, { expanded: true, isPartial: false }, theme, context({ isPartial: false })));
    expect(lines[0]).toBe("[shell] stopped · session 1");
    const exec = resolver("exec_command", () => null) as Renderers;
    const { output_rendered: _rendered, ...raw } = exitedResult(0);
    const expanded = plain(exec.renderResult({ content: [], details: raw }, { expanded: true, isPartial: false }, theme, context({ isPartial: false })));
    expect(expanded).toContain("Output (80 B read):");
  });

  it("the wake message renders from its details", () => {
    const render = messageRenderers.get(WAKE_MESSAGE_TYPE)!;
    const lines = plain(render({ details: WAKE }, { expanded: false, outputPad: 1, keyText: () => "ctrl+o" }, theme)!);
    expect(lines[0]).toBe("[shell] wake · 2 jobs finished · ctrl+o to expand");
    expect(render({ details: undefined }, { expanded: false, outputPad: 1, keyText: () => "ctrl+o" }, theme)).toBeUndefined();
  });
});
