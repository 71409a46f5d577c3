/**
 * Installs wait_jobs into one Pi extension instance: the tool over the shell and monitor services it collects from
 * (host/wait/service.ts). Its transcript row is the console's (host/console/wait-renderers.ts).
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { WAIT_JOBS_TOOL } from "./params.ts";
import { waitJobsText } from "./result-text.ts";
import { WaitService, type WaitServiceOptions } from "./service.ts";
import { ToolError } from "../tools/checked.ts";
import { validateWaitJobs } from "./validate.ts";

/** The tool's line in the system prompt's Available tools (docs/tokens.md counts it). */
export const WAIT_JOBS_SNIPPET = "Wait for many background jobs at once";

/** Models send session ids as numbers and omitted fields as null; the schema takes strings and absent fields. */
function normalized(args: unknown): Record<string, unknown> {
  if (typeof args !== "object" || args === null || Array.isArray(args)) return {};
  const out = Object.fromEntries(Object.entries(args).filter(([, value]) => value !== null));
  if (Array.isArray(out.ids)) out.ids = out.ids.map((id: unknown) => (typeof id === "number" ? String(id) : id));
  return out;
}

export function installWaitJobs(pi: ExtensionAPI, services: WaitServiceOptions): WaitService {
  const service = new WaitService(services);
  pi.registerTool({
    ...WAIT_JOBS_TOOL,
    promptSnippet: WAIT_JOBS_SNIPPET,
    prepareArguments(args) {
      // Checked here first, so bad input gets this tool's errors, which name the field, rather than a schema's.
      const prepared = normalized(args);
      const checked = validateWaitJobs(prepared);
      if (!checked.ok) throw new ToolError(checked.error);
      return prepared as never;
    },
    async execute(toolCallId, params, signal, _onUpdate, ctx) {
      const result = await service.wait(params, { toolCallId, signal, cwd: ctx.cwd });
      return {
        content: [{ type: "text", text: waitJobsText(result) }],
        details: result,
        structuredContent: result as unknown as Record<string, never>,
      };
    },
  });
  return service;
}
