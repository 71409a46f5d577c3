/**
 * The rules of the shell-jobs spec that the model is told, each stated once: the workflow in the system-prompt guidance
 * (codemode's lazy tool discovery cannot hide it), what one field does in that field's schema. Every word of both is
 * paid on every request (docs/tokens.md), so a rule said twice is a cost, and a rule said nowhere is a regression.
 */
import { describe, expect, it } from "vitest";
import { SHELL_TOOLS } from "../../host/shell/declarations.ts";
import { SHELL_JOBS_GUIDANCE } from "../../host/shell/guidance.ts";

const G = SHELL_JOBS_GUIDANCE;
/** The declarations as a provider receives them, with the snippet lines Pi writes for them. */
const declared = JSON.stringify(
  Object.values(SHELL_TOOLS).map(({ name, description, promptSnippet, parameters }) => ({ name, description, promptSnippet, parameters })),
);
const everything = `${G}\n${declared}`;

type Tool = keyof typeof SHELL_TOOLS;
const field = (tool: Tool, name: string): { description?: string; default?: unknown; maximum?: number; enum?: string[] } =>
  (JSON.parse(JSON.stringify(SHELL_TOOLS[tool].parameters)) as { properties: Record<string, never> }).properties[name] ?? {};
const described = (tool: Tool, name: string): string => field(tool, name).description ?? "";
const occurrences = (phrase: string): number => everything.split(phrase).length - 1;

describe("shell-jobs guidance: the workflow", () => {
  it("exec_command returns a result or a session_id; the wait is not a timeout; servers get a finite lifetime", () => {
    expect(G).toMatch(/exec_command returns the exit result, or a session_id if still running when yield_time_ms ends/);
    expect(G).toMatch(/not a timeout: timeout_seconds is the hard lifetime; give servers and watchers a finite one/);
  });

  it("wake for finite work whose result is needed, unasked, and keep working; none for services", () => {
    expect(G).toMatch(/on_exit: "wake" for finite work whose result you need/);
    expect(G).toMatch(/keep working on independent steps/);
    expect(G).toMatch(/one message arrives when it ends unobserved/);
    expect(G).toMatch(/No need for the user to ask/);
    expect(G).toMatch(/Keep "none" for servers, REPLs, watchers and start-only requests/);
  });

  it("reads: immediate with yield_time_ms 0, with the returned id, no repeated empty reads", () => {
    expect(G).toContain('write_stdin {"session_id": N, "yield_time_ms": 0}');
    expect(G).toMatch(/using the session_id returned/);
    expect(G).toMatch(/Do not repeat empty reads; wait instead/);
  });

  it("bounded, folded output and its notation; the full log at log_path, read without consuming output", () => {
    expect(G).toMatch(/bounded \(head and tail\)/);
    expect(G).toContain('"⟪×N⟫ template" stands for N lines, the n-th taking the n-th value of each {a..b} or {x,y}');
    expect(G).toMatch(/~ marks a count or range as approximate/);
    expect(G).toMatch(/long middle is digested, error-like lines kept/);
    expect(G).toMatch(/log_path holds the full log: read it without consuming output/);
  });

  it("stop what is no longer needed", () => {
    expect(G).toMatch(/kill_session jobs you no longer need/);
  });
});

describe("shell tool declarations: what each field does", () => {
  it("exec_command: lifetime, wait, wake default, PTY, shell, workdir, servers, limits, raw", () => {
    expect(field("exec_command", "timeout_seconds")).toMatchObject({ maximum: 86_400, default: 1800 });
    expect(described("exec_command", "yield_time_ms")).toBe("250–30000, default 10000");
    expect(field("exec_command", "on_exit")).toMatchObject({ enum: ["none", "wake"], default: "none" });
    expect(described("exec_command", "tty")).toMatch(/PTY, for interactive programs/);
    expect(described("exec_command", "shell")).toMatch(/\$SHELL, else \/bin\/sh/);
    expect(described("exec_command", "workdir")).toMatch(/Pi's cwd/);
    expect(described("exec_command", "ready")).toMatch(/return once all hold; job keeps running/);
    expect(described("exec_command", "limits")).toMatch(/resident MiB, CPU seconds, live processes/);
    expect(described("exec_command", "raw")).toMatch(/as printed, not folded/);
  });

  it("write_stdin: escapes, exclusive inputs, pipes-only EOF, the empty-wait rules, resize ranges", () => {
    expect(described("write_stdin", "chars")).toMatch(/C escapes decoded: \\r is Enter, \\u0003 Ctrl-C/);
    expect(described("write_stdin", "chars_b64")).toMatch(/base64; not with chars/);
    expect(described("write_stdin", "end_stdin")).toMatch(/pipes only/);
    expect(described("write_stdin", "yield_time_ms")).toMatch(/With input: 250–30000, default 250/);
    expect(described("write_stdin", "yield_time_ms")).toMatch(/Without: 0 reads at once, else at least \(and by default\) 5000/);
    expect(described("write_stdin", "yield_until")).toMatch(/UTC time .*; not with yield_time_ms or input/);
    expect(described("write_stdin", "cols")).toBe("PTY resize, with rows: 20–500");
    expect(described("write_stdin", "rows")).toBe("PTY resize, with cols: 5–300");
  });

  it("the other three tools: read-only listing, on_exit without killing, the stop's escalation and killed: false", () => {
    expect(SHELL_TOOLS.list_sessions.description).toMatch(/Read-only: consumes no output, suppresses no wake/);
    expect(SHELL_TOOLS.set_on_exit.description).toMatch(/on_exit without killing it/);
    expect(SHELL_TOOLS.kill_session.description).toMatch(/process group: signal, then SIGKILL after 2 s/);
    expect(SHELL_TOOLS.kill_session.description).toMatch(/killed: false: not confirmed, the job is still yours/);
    expect(field("kill_session", "signal")).toMatchObject({ default: "SIGTERM" });
    expect(SHELL_TOOLS.exec_command.promptSnippet).toMatch(/replaces bash/);
  });

  it("enums are plain string enums: shorter, and some providers reject anyOf/const in parameters", () => {
    expect(declared).not.toMatch(/anyOf|"const"/);
  });
});

// raw is a field of two tools, so its description is declared twice by design; every other rule is said once.
describe("each rule once", () => {
  it.each([
    "not a timeout",
    "hard lifetime",
    "start-only",
    "unobserved",
    '"yield_time_ms": 0',
    "reads at once",
    "5000",
    "Enter",
    "Ctrl-C",
    "pipes only",
    "without killing",
    "SIGKILL after",
    "killed: false",
    "consumes no output",
    "without consuming output",
    "keeps running",
  ])("%s", (phrase) => {
    expect(occurrences(phrase)).toBe(1);
  });
});
