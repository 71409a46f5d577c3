/** The offline demo's scripted model walks the tour from the conversation, whatever the user typed. */
import { describe, expect, it } from "vitest";
import { hasCredentials, piArguments } from "../../demo/start.ts";
import { CHECK_COMMANDS, nextMove, REPL_COMMAND, TICK_COMMAND, WAKE_COMMAND, type TourMessage } from "../../demo/tour.ts";

const user = (text: string): TourMessage => ({ role: "user", content: [{ type: "text", text }] });
const assistant = (move: ReturnType<typeof nextMove>): TourMessage => ({
  role: "assistant",
  content: [{ type: "text", text: move.text }, ...move.toolCalls.map((c) => ({ type: "toolCall", name: c.name, arguments: c.arguments }))],
});
const toolResult = (toolName: string, text: string): TourMessage => ({ role: "toolResult", toolName, content: [{ type: "text", text }] });

describe("demo tour", () => {
  it("build → failing tests → PTY REPL with write_stdin → wake on exit → the end", () => {
    const messages: TourMessage[] = [user("hi")];
    const step = (reply: TourMessage) => {
      const move = nextMove(messages);
      messages.push(assistant(move), reply);
      return move;
    };
    expect(step(toolResult("monitor_start", "Monitor started")).toolCalls[0]).toMatchObject({ name: "monitor_start", arguments: { description: "noisy build" } });
    messages.push(user("Monitor: noisy build\nstatus=success"));
    expect(step(toolResult("monitor_start", "ack")).toolCalls[0]).toMatchObject({ arguments: { description: "test suite" } });
    messages.push(user("Monitor: test suite\nstatus=failure"));
    expect(step(toolResult("exec_command", "Process running with session_id 4 (exec_command).")).toolCalls[0]).toMatchObject({ arguments: { cmd: REPL_COMMAND, tty: true } });
    expect(step(toolResult("write_stdin", "[ 7, 14, 21 ]")).toolCalls[0]).toMatchObject({ name: "write_stdin", arguments: { session_id: 4 } });
    expect(step(toolResult("write_stdin", "exited")).toolCalls[0]).toMatchObject({ name: "write_stdin", arguments: { chars: ".exit\n" } });
    expect(step(toolResult("exec_command", "Process running with session_id 5")).toolCalls[0]).toMatchObject({ arguments: { cmd: WAKE_COMMAND, on_exit: "wake" } });
    const waiting = nextMove(messages);
    expect(waiting.toolCalls).toEqual([]);
    messages.push(assistant(waiting), user("[shell-jobs] A background job armed with on_exit \"wake\" finished: session_id 5: exited"));
    expect(nextMove(messages).text).toContain("That is the tour");
  });

  it("\"checks\" starts three checks in one batch, then collects them with one wait_jobs call", () => {
    const messages: TourMessage[] = [user("checks")];
    const start = nextMove(messages);
    expect(start.toolCalls.map((c) => c.arguments.cmd)).toEqual(CHECK_COMMANDS);
    messages.push(assistant(start), ...[3, 4, 5].map((id) => toolResult("exec_command", `Process running with session_id ${id} (exec_command).`)));
    const wait = nextMove(messages);
    expect(wait.toolCalls).toEqual([{ name: "wait_jobs", arguments: { ids: ["3", "4", "5"] } }]);
    messages.push(assistant(wait), toolResult("wait_jobs", "3 jobs: 2 success, 1 failure (job_4 exit 1) · 1.0s"));
    expect(nextMove(messages).toolCalls).toEqual([]);
  });

  it("\"background\" starts a long shell job, then a long monitor", () => {
    const messages: TourMessage[] = [user("background")];
    const first = nextMove(messages);
    expect(first.toolCalls[0]).toMatchObject({ name: "exec_command", arguments: { cmd: TICK_COMMAND } });
    messages.push(assistant(first), toolResult("exec_command", "Process running with session_id 1"));
    expect(nextMove(messages).toolCalls[0]).toMatchObject({ name: "monitor_start", arguments: { description: "dev server log" } });
  });

  it("uses the demo only without credentials", () => {
    expect(hasCredentials({ OPENAI_API_KEY: "sk" }, "/nonexistent")).toBe(true);
    expect(hasCredentials({ PATH: "/bin" }, "/nonexistent")).toBe(false);
    expect(piArguments(true, []).join(" ")).toMatch(/--model pi-jobs-demo\/scripted-tour/);
    expect(piArguments(false, ["-c"]).join(" ")).not.toMatch(/demo/);
  });
});
