/**
 * The `--keep-builtin-bash` flag, through the real `pi` CLI in json mode: by default the model's `bash` call is
 * refused because the shell-job tools replace it; with the flag it runs next to them.
 */
import { describe, expect, test } from "vitest";
import { runJson, type PiRecord } from "./harness/cli.ts";

const SHELL_ENTRY = "tests/fixtures/shell-jobs-extension.ts";
const steps = [
  { toolCalls: [{ name: "bash", arguments: { command: "echo builtin-ran" } }] },
  { toolCalls: [{ name: "exec_command", arguments: { cmd: "echo shell-job-ran" } }] },
  { text: "done" },
];

function toolEnds(events: PiRecord[]): { toolName: string; isError: boolean; text: string }[] {
  return events
    .filter((e) => e.type === "tool_execution_end")
    .map((e) => {
      const result = e.result as { content?: { text?: string }[] } | undefined;
      return { toolName: String(e.toolName), isError: Boolean(e.isError), text: (result?.content ?? []).map((c) => c.text ?? "").join("") };
    });
}

describe("--keep-builtin-bash", () => {
  test("without the flag, bash is replaced by the shell-job tools", async () => {
    const run = await runJson("go", { steps, extensions: [SHELL_ENTRY] });
    expect(run.code, run.stderr).toBe(0);
    const [bash, exec] = toolEnds(run.events);
    expect(bash).toMatchObject({ toolName: "bash", isError: true });
    expect(bash!.text).not.toContain("builtin-ran");
    expect(exec).toMatchObject({ toolName: "exec_command", isError: false });
    expect(exec!.text).toContain("shell-job-ran");
  });

  test("with the flag, bash stays active next to them", async () => {
    const run = await runJson("go", { steps, extensions: [SHELL_ENTRY], args: ["--keep-builtin-bash"] });
    expect(run.code, run.stderr).toBe(0);
    const [bash, exec] = toolEnds(run.events);
    expect(bash).toMatchObject({ toolName: "bash", isError: false });
    expect(bash!.text).toContain("builtin-ran");
    expect(exec!.text).toContain("shell-job-ran");
  });
});
