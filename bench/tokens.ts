/**
 * `npm run tokens`: offline cl100k_base token counts for what monitors put in front of the model — the tool
 * declarations with the prompt guidance (a fixed cost on every request) and the terminal report of representative
 * workloads — and of shell-job output before and after rendering (bench/shell-output.ts). Reports are built by the real report builder from outcomes shaped like the ones the monitor actor
 * produces for those workloads. Prints a markdown table and writes docs/tokens.md.
 *
 * These are tokenizer estimates of the serialised text, not billing: providers add their own framing.
 */
import { writeFileSync } from "node:fs";
import { NO_EVIDENCE } from "../mailbox/evidence.ts";
import { encoder, tokens } from "./token-count.ts";
import type { DiagnosticLine, MonitorOutcome } from "../mailbox/monitor.ts";
import { buildGuidance } from "../host/monitor/guidance.ts";
import { buildAcknowledgement, buildReport, type ReportInput } from "../host/monitor/report.ts";
import { MONITOR_START, MONITOR_START_TOOL, MONITOR_STOP, MONITOR_STOP_TOOL } from "../host/monitor/schemas.ts";
import { rawReads, renderedReads, SHELL_WORKLOADS } from "./shell-output.ts";
import { JOB_WORKLOADS, jobOutputs } from "./job-outputs.ts";
import beforeFolding from "./results/2026-12-05-tokens-before-folding.json" with { type: "json" };
import { outcome as quietOutcome } from "../tests/fixtures/monitor-outcomes.ts";
import { ExecCommandParams } from "../host/shell/params.ts";
import { WAIT_JOBS_TOOL } from "../host/wait/params.ts";
import { WAIT_JOBS_SNIPPET } from "../host/wait/install.ts";
import { allDeclarations, allEight, allGuidance, allGuidanceRows, allToolRows } from "./standing-cost.ts";
import { MEASURED_PATHS, realToolRows, realToolsMarkdown } from "./real-tools.ts";

// ── Fixed cost: declarations and guidance ───────────────────────────────────────────────────────────────────────

/** A tool as a provider declares it: name, description and the JSON schema of its parameters. */
const declaration = ({ name, description, parameters }: { name: string; description: string; parameters: unknown }): string =>
  JSON.stringify({ name, description, parameters });

const declarations = [declaration(MONITOR_START_TOOL), declaration(MONITOR_STOP_TOOL)];
const declarationTokens = declarations.reduce((sum, text) => sum + tokens(text), 0);

/** A parameter schema without some of its fields: what a declaration cost before they were added. */
function withoutFields(schema: unknown, fields: readonly string[]): unknown {
  const copy = JSON.parse(JSON.stringify(schema)) as { properties: Record<string, unknown> };
  for (const field of fields) delete copy.properties[field];
  return copy;
}
// The description text is the same either way; only the parameters differ, so the name stands in for the rest.
const SERVICE_FIELDS = { exec_command: ["ready", "stall_seconds", "on_stall"], monitor_start: ["stall_seconds"] } as const;
const serviceRows = [
  { tool: "exec_command", schema: ExecCommandParams, fields: SERVICE_FIELDS.exec_command },
  { tool: MONITOR_START, schema: MONITOR_START_TOOL.parameters, fields: SERVICE_FIELDS.monitor_start },
].map(({ tool, schema, fields }) => {
  const before = tokens(declaration({ name: tool, description: "", parameters: withoutFields(schema, fields) }));
  const after = tokens(declaration({ name: tool, description: "", parameters: schema }));
  return { tool, fields: fields.join(", "), before, after, added: after - before };
});
const serviceAdded = serviceRows.reduce((sum, row) => sum + row.added, 0);

// wait_jobs is a new tool: all it puts in front of the model is added — its declaration, and in Pi's system prompt its
// snippet (Available tools) and its guideline (Guidelines), each as the line Pi writes for it.
const waitRows = [
  { part: "declaration (name, description, parameters)", tokens: tokens(declaration(WAIT_JOBS_TOOL)) },
  { part: "prompt snippet", tokens: tokens(`- wait_jobs: ${WAIT_JOBS_SNIPPET}\n`) },
  { part: "prompt guideline", tokens: tokens(`- ${WAIT_JOBS_TOOL.promptGuidelines.join("\n- ")}\n`) },
];
const waitAdded = waitRows.reduce((sum, row) => sum + row.tokens, 0);

// With codemode active, Pi appends to each declared tool's description what a script call resolves to, naming the
// output schema's fields (`{ stopped }`, a union as `{ … } | { … }`). Rebuilt here from the schemas in Pi's format.
interface JsonObjectSchema {
  properties: Record<string, { const?: unknown }>;
  required?: string[];
}
const fieldList = (schema: JsonObjectSchema): string =>
  `{ ${Object.entries(schema.properties)
    .map(([name, field]) => {
      const optional = schema.required?.includes(name) ? "" : "?";
      return `${name}${optional}${field.const === undefined ? "" : `: ${JSON.stringify(field.const)}`}`;
    })
    .join(", ")} }`;
const resolvesTo = (name: string, schema: { anyOf?: JsonObjectSchema[] } & Partial<JsonObjectSchema>): string =>
  `\n\nCodemode: \`tools.${name}(args)\` resolves to \`${
    schema.anyOf ? schema.anyOf.map(fieldList).join(" | ") : fieldList(schema as JsonObjectSchema)
  }\`.`;
const codemodeSuffixTokens =
  tokens(resolvesTo(MONITOR_START, JSON.parse(JSON.stringify(MONITOR_START_TOOL.outputSchema)))) +
  tokens(resolvesTo(MONITOR_STOP, JSON.parse(JSON.stringify(MONITOR_STOP_TOOL.outputSchema))));

const guidanceCases: [label: string, tools: string[], restored: boolean][] = [
  ["bash + monitor", ["bash", MONITOR_START, MONITOR_STOP], false],
  ["bash + monitor + codemode", ["bash", MONITOR_START, MONITOR_STOP, "codemode"], false],
  ["exec_command + monitor", ["exec_command", "write_stdin", MONITOR_START, MONITOR_STOP], false],
  ["monitor only", [MONITOR_START, MONITOR_STOP], false],
  ["monitor inactive, restored results", ["bash"], true],
  ["monitor inactive, unused", ["bash"], false],
];

const fixedRows = guidanceCases.map(([label, tools, restored]) => {
  const guidance = buildGuidance(tools, restored) ?? "";
  const declared = tools.includes(MONITOR_START)
    ? declarationTokens + (tools.includes("codemode") ? codemodeSuffixTokens : 0)
    : 0;
  return { label, guidanceChars: guidance.length, guidanceTokens: tokens(guidance), total: declared + tokens(guidance) };
});

// ── Reports for the workloads ───────────────────────────────────────────────────────────────────────────────────

/** The workloads run in exit mode and exit 0 unless they say otherwise. */
const outcome = (fields: Partial<MonitorOutcome>): MonitorOutcome => quietOutcome({ completion: "exit", exitCode: 0, ...fields });

const line = (source: DiagnosticLine["source"], text: string, count = 1): DiagnosticLine => ({
  source,
  text,
  count,
  clipped: false,
});

/** The actor's diagnostic tail: the newest records within 100 lines and 32 KiB. */
function tail(lines: DiagnosticLine[]): DiagnosticLine[] {
  const kept: DiagnosticLine[] = [];
  let bytes = 0;
  for (let i = lines.length - 1; i >= 0 && kept.length < 100; i -= 1) {
    const entry = lines[i] as DiagnosticLine;
    bytes += Buffer.byteLength(entry.text) + 1;
    if (bytes > 32 * 1024) break;
    kept.unshift(entry);
  }
  return kept;
}

const sentinel = (json: string): Partial<MonitorOutcome> => ({
  matched: `DONE ${json}`,
  matchedSource: "stdout",
  captures: { json },
  hasResult: true,
  result: JSON.parse(json) as unknown,
});

const noisyJson = '{"ok":true,"modules":2000,"warnings":0}';
const diagnostics = Array.from({ length: 10_000 }, (_, i) =>
  line("stdout", `check ${String(i + 1).padStart(5, "0")}: src/module_${(i * 7919) % 10_007}.ts verified in ${(i * 37) % 900}ms`),
);
diagnostics.push(line("stderr", "error: 3 checks failed (see above)"));
const bigJson = JSON.stringify({ value: "a".repeat(24 * 1024) });

interface Workload {
  name: string;
  description: string;
  expected: string;
  timeoutMs: number;
  elapsedMs: number;
  outcome: MonitorOutcome;
}

const workloads: Workload[] = [
  {
    name: "2,000 noisy lines, then JSON success",
    description: "build project",
    expected: "^DONE (?<json>\\{.*\\})$",
    timeoutMs: 600_000,
    elapsedMs: 8_412,
    outcome: outcome(sentinel(noisyJson)),
  },
  {
    name: "10,000 diagnostics, then failure",
    description: "verify modules",
    expected: "^DONE$",
    timeoutMs: 600_000,
    elapsedMs: 21_300,
    outcome: outcome({ status: "failure", exitCode: 1, output: tail(diagnostics), outputTruncated: true }),
  },
  {
    name: "exit 0 without the sentinel (result_missing)",
    description: "silent finish probe",
    expected: "EXPECTED_SENTINEL_XYZ",
    timeoutMs: 600_000,
    elapsedMs: 7,
    outcome: outcome({
      status: "result_missing",
      completion: "match",
      output: [line("stdout", "Task finished without contract")],
    }),
  },
  {
    name: "timeout",
    description: "timeout probe",
    expected: "NEVER_MATCH",
    timeoutMs: 800,
    elapsedMs: 802,
    outcome: outcome({ status: "timeout", completion: "match", exitCode: null, signal: "SIGTERM", reason: "timeout" }),
  },
  {
    name: "24 KiB repetitive JSON",
    description: "export payload",
    expected: "^DONE (?<json>.*)$",
    timeoutMs: 5_000,
    elapsedMs: 61,
    outcome: outcome(sentinel(bigJson)),
  },
];

const report = (workload: Workload, compact: boolean, direct: boolean): string => {
  const input: ReportInput = {
    monitorId: "monitor_1",
    description: workload.description,
    outcome: workload.outcome,
    evidence: NO_EVIDENCE,
    elapsedMs: workload.elapsedMs,
    timeoutMs: workload.timeoutMs,
    compact,
    direct,
    expected: workload.expected,
  };
  return buildReport(input);
};

const reportRows = workloads.map((workload) => ({
  name: workload.name,
  plain: tokens(report(workload, false, true)),
  compact: tokens(report(workload, true, true)),
  compactAsync: tokens(report(workload, true, false)),
}));
const acknowledgement = tokens(buildAcknowledgement("background verification", "monitor_1"));

const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0);
const shellRows = await Promise.all(
  SHELL_WORKLOADS.map(async (workload) => ({
    name: workload.name,
    raw: sum(rawReads(workload).map(tokens)),
    rendered: sum((await renderedReads(workload)).map(tokens)),
  })),
);

// Whole jobs, run for real, beside the same workloads measured on the commit before folding.
const jobRows = (await jobOutputs()).map((output, i) => {
  const before = beforeFolding.workloads[i];
  if (before === undefined || before.name !== JOB_WORKLOADS[i]?.name) throw new Error(`bench/results: no figure before folding for "${output.name}"`);
  return {
    name: output.name,
    monitorBefore: before.monitor,
    monitor: output.monitor === null ? null : tokens(output.monitor),
    execBefore: before.exec,
    exec: tokens(output.exec),
    execCharsBefore: before.execChars,
    execChars: output.exec.length,
    text: output.exec,
  };
});
// Real tools with planted failures: facts and tokens per path.
const realTools = await realToolRows();
const realReal = realTools.filter((row) => !row.name.includes("(synthetic)"));
const synthetic = realTools.find((row) => row.name.includes("(synthetic)"));
if (synthetic === undefined) throw new Error("bench/real-tools.ts: the synthetic workload is missing");
const factsMissing = realTools.reduce((sum, row) => sum + MEASURED_PATHS.reduce((n, path) => n + row.paths[path].missing.length, 0), 0);
const escapesShown = realTools.reduce((sum, row) => sum + MEASURED_PATHS.filter((path) => row.paths[path].escapes).length, 0);
const worstMonitorShare = Math.max(...realReal.map((row) => row.paths.monitor_start.tokens / row.paths.exec_command.tokens));
const [buildJob, diagnosticsJob, stepsJob, plantedJob] = jobRows;
if (!buildJob || !diagnosticsJob || !stepsJob || !plantedJob) throw new Error("bench/job-outputs.ts: a workload is missing");
const hasLine = (text: string, line: string): boolean => text.split("\n").includes(line);

// The fast count must agree with the library wherever the library is quick enough to ask.
for (const text of [...declarations, ...fixedRows.map((row) => row.label), ...workloads.flatMap((w) => [true, false].map((c) => report(w, c, true)))]) {
  if (text.length <= 8_000 && tokens(text) !== encoder.encode(text).length) {
    throw new Error(`token count disagrees with js-tiktoken for: ${text.slice(0, 80)}`);
  }
}
for (const size of [1, 7, 8, 9, 100, 1_000, 3_000]) {
  const run = `{"value":"${"a".repeat(size)}"}`;
  if (tokens(run) !== encoder.encode(run).length) throw new Error(`token count disagrees for a run of ${size}`);
}

// ── Targets and output ──────────────────────────────────────────────────────────────────────────────────────────

const fmt = (value: number): string => value.toLocaleString("en-US");
const bashMonitor = fixedRows[0]?.total ?? 0;
const noisy = reportRows[0]?.plain ?? 0;
const bigCompact = reportRows[4]?.compact ?? 0;
const targets: [string, number, number][] = [
  ["declarations + guidance (bash + monitor)", bashMonitor, 400],
  ["noisy-success report", noisy, 60],
  ["24 KiB repetitive JSON report, compact", bigCompact, 100],
  ["declarations added for services and stuck jobs", serviceAdded, 150],
  ["wait_jobs: declaration, snippet and guideline", waitAdded, 150],
  ["all eight tools: declarations + guidance", allEight, 1_800],
  ["exec_command, 2,000-line build (tokens)", buildJob.exec, 1_500],
  ["exec_command, 10,000 diagnostics (tokens)", diagnosticsJob.exec, 2_500],
  ["monitor, result_missing after 50 `step N: ok` (tokens)", stepsJob.monitor ?? Infinity, 150],
  ["monitor, 10,000 diagnostics (tokens)", diagnosticsJob.monitor ?? Infinity, 2_000],
  ["monitor, noisy success (tokens; no growth)", buildJob.monitor ?? Infinity, buildJob.monitorBefore ?? 0],
  ["exec_command, planted error run: whole result (characters)", plantedJob.execChars, 8_000],
  ["real tools: facts missing from any path's text", factsMissing, 0],
  ["real tools: texts with an escape sequence (coloured output included)", escapesShown, 0],
  ["real tools: the monitor's tokens over exec_command's, worst tool (per cent)", Math.round(worstMonitorShare * 100), 120],
  ["10,000 compiler errors of one shape: exec_command (tokens)", synthetic.paths.exec_command.tokens, 2_500],
  ["10,000 compiler errors of one shape: monitor (tokens)", synthetic.paths.monitor_start.tokens, 2_000],
];
/** What must be in the text, verbatim, whatever its size. */
const verbatim: [string, boolean][] = [
  ["the build's JSON result line", hasLine(buildJob.text, '__RESULT__ {"ok":true,"modules":2000,"warnings":0}')],
  ["the diagnostics' failure line and last diagnostic", hasLine(diagnosticsJob.text, "__FAILED__") && hasLine(diagnosticsJob.text, "note[10000]: src/pkg_9/module_4609.ts:1:1 unused import dep_0")],
  ["`ERROR: disk quota exceeded` from the middle of 20,000 lines", hasLine(plantedJob.text, "ERROR: disk quota exceeded")],
];

const markdown = [
  "# Token figures",
  "",
  "Offline cl100k_base counts (js-tiktoken) of the text monitors and shell jobs put in front of the model. They estimate the",
  "serialised text only: providers add their own framing, and billing is not measured. Reproduce with `npm run tokens`.",
  "",
  "## Fixed cost per request",
  "",
  `Tool declarations (name, description and JSON parameter schema of ${MONITOR_START} and ${MONITOR_STOP}): ` +
    `${fmt(declarationTokens)} tokens; with codemode active Pi appends what a script call resolves to ` +
    `(+${fmt(codemodeSuffixTokens)}). The guidance depends on the active tools:`,
  "",
  "| Active tools | Guidance chars | Guidance tokens | Declarations + guidance |",
  "|---|---:|---:|---:|",
  ...fixedRows.map((row) => `| ${row.label} | ${fmt(row.guidanceChars)} | ${fmt(row.guidanceTokens)} | ${fmt(row.total)} |`),
  "",
  "## All eight tools: declarations + guidance",
  "",
  "What every request carries while all eight tools are active (Pi's bash replaced, as by default): each tool's",
  "declaration as a provider receives it (`JSON.stringify({name, description, parameters})`), its snippet line and",
  "guideline lines as Pi writes them into the system prompt, and the monitor and shell-jobs guidance appended there.",
  "",
  "| Part | Declaration | Snippet | Guidelines or guidance |",
  "|---|---:|---:|---:|",
  ...allToolRows.map((row) => `| ${row.tool} | ${fmt(row.declaration)} | ${fmt(row.snippet)} | ${fmt(row.guidelines)} |`),
  ...allGuidanceRows.map((row) => `| ${row.part} | | | ${fmt(row.tokens)} |`),
  "",
  `Declarations ${fmt(allDeclarations)} + guidance ${fmt(allGuidance)} = **${fmt(allEight)}** tokens.`,
  "",
  "## Services and stuck jobs: added declaration cost",
  "",
  "Parameter schemas of the tools with and without the fields for readiness and stalls (the descriptions are",
  "unchanged). Paid on every request while the tool is active.",
  "",
  "| Tool | Fields | Before | After | Added |",
  "|---|---|---:|---:|---:|",
  ...serviceRows.map((row) => `| ${row.tool} | ${row.fields} | ${fmt(row.before)} | ${fmt(row.after)} | +${fmt(row.added)} |`),
  "",
  "## wait_jobs: added declaration cost",
  "",
  "Everything the tool adds to each request while it is active: its declaration, and the snippet and guideline Pi",
  "writes into the system prompt. No other declaration changed with it.",
  "",
  "| Part | Tokens |",
  "|---|---:|",
  ...waitRows.map((row) => `| ${row.part} | ${fmt(row.tokens)} |`),
  `| total | ${fmt(waitAdded)} |`,
  "",
  "## Terminal reports",
  "",
  "Direct tool results (default and `compact=true`) and the asynchronous wake report with `compact=true`, built by",
  "`host/monitor/report.ts` from outcomes shaped like the actor's for each workload. The asynchronous",
  `acknowledgement (\`Monitor started\` … \`terminal_result=pending\`) is ${fmt(acknowledgement)} tokens.`,
  "",
  "| Workload | Default | compact=true | compact=true, asynchronous |",
  "|---|---:|---:|---:|",
  ...reportRows.map((row) => `| ${row.name} | ${fmt(row.plain)} | ${fmt(row.compact)} | ${fmt(row.compactAsync)} |`),
  "",
  "The 10,000-diagnostics report carries the bounded tail (the newest 100 lines); the rest stays out of context.",
  "The 24 KiB JSON stays complete in the structured result either way; `compact=true` changes only its text,",
  "which decodes exactly to the default payload.",
  "",
  "## Shell-job output: raw → rendered",
  "",
  "The `output` text of `exec_command` / `write_stdin` results for each workload, summed over its reads, before",
  "(the raw bytes' head and tail with control characters escaped) and after rendering (a PTY through the terminal",
  "emulator, pipes as pipe text; `output_rendered` says which). Built by `bench/shell-output.ts`; the REPL bytes are",
  "recorded from `node -i` in a 120×30 PTY, the others are shaped like what those programs write.",
  "",
  "| Workload | Raw (before) | Rendered (after) | After ÷ before |",
  "|---|---:|---:|---:|",
  ...shellRows.map((row) => `| ${row.name} | ${fmt(row.raw)} | ${fmt(row.rendered)} | ${(row.rendered / row.raw).toFixed(2)} |`),
  "",
  "## Whole jobs: folded output",
  "",
  "What the model receives for a whole job, run for real (`bench/job-outputs.ts`): a monitor's direct report, and the",
  "text of an `exec_command` that runs the command to its end. Before: the same script on the commit before folding",
  `(${beforeFolding.commit}, \`bench/results/2026-12-05-tokens-before-folding.json\`). Shell reads fold repeated`,
  "lines, cut on line boundaries and digest an over-long middle instead of dropping it; a monitor's tail folds only",
  "where the fold decodes exactly to its lines.",
  "",
  "| Workload | Monitor before | Monitor after | exec_command before | exec_command after | exec_command chars before → after |",
  "|---|---:|---:|---:|---:|---:|",
  ...jobRows.map(
    (row) =>
      `| ${row.name} | ${row.monitorBefore === null ? "—" : fmt(row.monitorBefore)} | ${row.monitor === null ? "—" : fmt(row.monitor)} | ` +
      `${fmt(row.execBefore)} | ${fmt(row.exec)} | ${fmt(row.execCharsBefore)} → ${fmt(row.execChars)} |`,
  ),
  "",
  "Verbatim in the exec_command result:",
  "",
  ...verbatim.map(([label, present]) => `- ${label}: ${present ? "yes" : "**no**"}`),
  "",
  ...realToolsMarkdown(realTools),
  "## Targets",
  "",
  "| Figure | Measured | Target | Met |",
  "|---|---:|---:|---|",
  ...targets.map(([label, value, limit]) => `| ${label} | ${fmt(value)} | ≤ ${fmt(limit)} | ${value <= limit ? "yes" : "no"} |`),
  "",
].join("\n");

process.stdout.write(markdown);
writeFileSync(new URL("../docs/tokens.md", import.meta.url), markdown);
if (targets.some(([, value, limit]) => value > limit) || verbatim.some(([, present]) => !present)) process.exitCode = 1;
