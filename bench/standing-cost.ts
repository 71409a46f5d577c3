/**
 * What every request carries while all eight tools are active (Pi's bash replaced, as by default): each tool's
 * declaration as a provider receives it, the lines Pi writes for it into the system prompt, and the guidance the
 * extension appends there. bench/tokens.ts puts it in docs/tokens.md; `node bench/standing-cost.ts` prints it alone.
 */
import { tokens } from "./token-count.ts";
import { buildGuidance } from "../host/monitor/guidance.ts";
import { MONITOR_START_TOOL, MONITOR_STOP_TOOL } from "../host/monitor/schemas.ts";
import { SHELL_TOOLS } from "../host/shell/declarations.ts";
import { SHELL_JOBS_GUIDANCE } from "../host/shell/guidance.ts";
import { WAIT_JOBS_TOOL } from "../host/wait/params.ts";
import { WAIT_JOBS_SNIPPET } from "../host/wait/install.ts";

interface Declared {
  name: string;
  description: string;
  parameters: unknown;
  promptSnippet?: string;
  promptGuidelines?: readonly string[];
}

/** The eight tools as they are registered; the monitor tools have neither snippet nor guidelines. */
const ALL_TOOLS: Declared[] = [
  ...Object.values(SHELL_TOOLS),
  MONITOR_START_TOOL,
  MONITOR_STOP_TOOL,
  { ...WAIT_JOBS_TOOL, promptSnippet: WAIT_JOBS_SNIPPET },
];

const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0);

// Pi writes a snippet as a line of the system prompt's tool list (`- name: snippet`) and each guideline as a line of
// its rules (`- rule`), a rule that an earlier tool already wrote only once.
const written = new Set<string>();
export const allToolRows = ALL_TOOLS.map((tool) => {
  const rules = (tool.promptGuidelines ?? []).filter((rule) => !written.has(rule));
  for (const rule of rules) written.add(rule);
  return {
    tool: tool.name,
    declaration: tokens(JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters })),
    snippet: tool.promptSnippet === undefined ? 0 : tokens(`- ${tool.name}: ${tool.promptSnippet}\n`),
    guidelines: sum(rules.map((rule) => tokens(`- ${rule}\n`))),
  };
});

// Each guidance block is appended to the system prompt after a blank line.
export const allGuidanceRows = [
  { part: "monitor guidance", tokens: tokens(`\n\n${buildGuidance(ALL_TOOLS.map((tool) => tool.name), false) ?? ""}`) },
  { part: "shell-jobs guidance", tokens: tokens(`\n\n${SHELL_JOBS_GUIDANCE}`) },
];

export const allDeclarations = sum(allToolRows.map((row) => row.declaration));
export const allGuidance = sum(allToolRows.map((row) => row.snippet + row.guidelines)) + sum(allGuidanceRows.map((row) => row.tokens));
export const allEight = allDeclarations + allGuidance;

if (import.meta.main) {
  console.table(allToolRows);
  console.table(allGuidanceRows);
  console.log(`declarations ${allDeclarations} + guidance ${allGuidance} = ${allEight}`);
}
