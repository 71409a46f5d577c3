/**
 * The offline demo's "model": a scripted tour that decides its next move from the conversation so far, so it works
 * whatever the user types and however long the jobs take. It shows a noisy build monitored to one result, a failing
 * test run with its evidence, an interactive PTY REPL driven with write_stdin, and a shell job that wakes the agent
 * when it exits. "background" starts two long-running jobs to explore in /monitor; "checks" runs three checks side by
 * side and collects them with one wait_jobs call. Pure: messages in, a move out.
 */

export interface TourCall {
  name: string;
  arguments: Record<string, unknown>;
}

export interface TourMove {
  text: string;
  toolCalls: TourCall[];
}

/** The slice of a provider message the tour reads. */
export interface TourMessage {
  role: string;
  content?: unknown;
  toolName?: string;
}

export const BUILD_COMMAND =
  "i=1; while [ $i -le 60 ]; do echo \"[build] compiling module $i/60\"; i=$((i+1)); sleep 0.03; done; " +
  "echo 'BUILD_OK {\"modules\":60,\"warnings\":0}'";

export const TEST_COMMAND =
  "echo 'running 4 tests'; for t in parse format render; do echo \"test $t ... ok\"; sleep 0.2; done; " +
  "echo 'test wrap ... FAILED'; echo '  expected 80 columns, got 81' >&2; echo 'test result: FAILED. 3 passed; 1 failed'; exit 1";

export const REPL_COMMAND = "node -i";
export const WAKE_COMMAND = "sleep 3; echo 'preview deployed'";
export const TICK_COMMAND = "i=0; while true; do i=$((i+1)); echo \"tick $i\"; sleep 0.3; done";
export const SERVER_COMMAND =
  "i=0; while true; do i=$((i+1)); echo \"GET /api/items/$i 200 $((i % 17 + 3))ms\"; sleep 0.1; done";

/** Three checks of different lengths, one failing, for "checks". */
export const CHECK_COMMANDS = [
  "for t in parse format render wrap; do sleep 0.3; echo \"test $t ... ok\"; done; echo 'test result: ok. 4 passed'",
  "sleep 0.6; echo 'src/wrap.ts:14:7  error  prefer-const' >&2; echo '1 problem (1 error)'; exit 1",
  "sleep 1; echo 'types: 0 errors'",
];

function textOf(message: TourMessage | undefined): string {
  if (message === undefined) return "";
  const content = message.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((block: { type?: string; text?: string }) => (block.type === "text" ? (block.text ?? "") : "")).join("");
}

function callsSoFar(messages: readonly TourMessage[]): { name: string; arguments: Record<string, unknown> }[] {
  const calls: { name: string; arguments: Record<string, unknown> }[] = [];
  for (const message of messages) {
    if (message.role !== "assistant" || !Array.isArray(message.content)) continue;
    for (const block of message.content as { type?: string; name?: string; arguments?: Record<string, unknown> }[]) {
      if (block.type === "toolCall" && typeof block.name === "string") calls.push({ name: block.name, arguments: block.arguments ?? {} });
    }
  }
  return calls;
}

function sessionIdIn(text: string): number | null {
  const match = /session_id (\d+)/.exec(text);
  return match ? Number(match[1]) : null;
}

const say = (text: string, toolCalls: TourCall[] = []): TourMove => ({ text, toolCalls });

export function nextMove(messages: readonly TourMessage[]): TourMove {
  const last = messages.at(-1);
  const lastText = textOf(last);
  const calls = callsSoFar(messages);
  const started = (description: string) => calls.some((c) => c.name === "monitor_start" && c.arguments.description === description);
  const lastCall = calls.at(-1);

  // Exploring: two long-running jobs for /monitor, started one after the other (a monitor-only batch ends the turn).
  if (last?.role === "user" && /^\s*"?background"?\W*$/i.test(lastText)) {
    return say("Starting a shell job that ticks every 0.3 s (it will run for five minutes)…", [
      { name: "exec_command", arguments: { cmd: TICK_COMMAND, yield_time_ms: 300, timeout_seconds: 300 } },
    ]);
  }
  if (last?.role === "toolResult" && lastCall?.name === "exec_command" && lastCall.arguments.cmd === TICK_COMMAND) {
    return say("…and a monitor over a chatty server log. Open /monitor to watch both, select with ↑↓, Enter for output, x to stop one.", [
      {
        name: "monitor_start",
        arguments: { command: SERVER_COMMAND, description: "dev server log", result_pattern: "^READY$", timeout_ms: 300_000 },
      },
    ]);
  }

  // Many jobs, one wait: three checks in one batch, then one wait_jobs call collects all three.
  if (last?.role === "user" && /^\s*"?checks"?\W*$/i.test(lastText)) {
    return say(
      "Starting three checks side by side…",
      CHECK_COMMANDS.map((cmd) => ({ name: "exec_command", arguments: { cmd, yield_time_ms: 200, timeout_seconds: 60 } })),
    );
  }
  if (last?.role === "toolResult" && lastCall?.name === "exec_command" && CHECK_COMMANDS.includes(String(lastCall.arguments.cmd))) {
    const ids = messages.slice(-CHECK_COMMANDS.length).map((m) => sessionIdIn(textOf(m))).filter((id) => id !== null);
    return say("…and collecting all three with one call, instead of reading each:", [{ name: "wait_jobs", arguments: { ids: ids.map(String) } }]);
  }
  if (last?.role === "toolResult" && lastCall?.name === "wait_jobs") {
    return say("One call, one line per check: the lint failure came with its last lines.");
  }

  if (!started("noisy build")) {
    return say(
      "Hello! I am the pi-jobs demo model: a scripted tour, not an AI, running offline with no API key.\n\n" +
        "First, a noisy build. A monitor runs it in the background, keeps its 60 progress lines out of the context, " +
        "and wakes me once with one structured result. Watch the activity row above the editor.",
      [
        {
          name: "monitor_start",
          arguments: {
            command: BUILD_COMMAND,
            description: "noisy build",
            result_pattern: "^BUILD_OK (?<json>\\{.*\\})$",
            failure_pattern: "^error:",
            completion: "exit",
          },
        },
      ],
    );
  }
  if (!started("test suite")) {
    return say(
      "The build reported once: status, elapsed time and its JSON result, instead of 60 log lines.\n\n" +
        "Next, a test run that fails. The failure report carries the evidence (the failing lines and the exit code).",
      [
        {
          name: "monitor_start",
          arguments: {
            command: TEST_COMMAND,
            description: "test suite",
            result_pattern: "^test result: ok",
            failure_pattern: "^test result: FAILED",
          },
        },
      ],
    );
  }
  const repl = calls.find((c) => c.name === "exec_command" && c.arguments.cmd === REPL_COMMAND);
  if (repl === undefined) {
    return say(
      "The failure arrived with its evidence. Now an interactive job: a Node REPL in a pseudo-terminal, driven with write_stdin.",
      [{ name: "exec_command", arguments: { cmd: REPL_COMMAND, tty: true, yield_time_ms: 1500, timeout_seconds: 120 } }],
    );
  }
  const writes = calls.filter((c) => c.name === "write_stdin");
  const replSession = sessionIdIn(
    textOf(messages.find((m) => m.role === "toolResult" && m.toolName === "exec_command" && /session_id \d+/.test(textOf(m)))),
  );
  if (writes.length === 0 && replSession !== null) {
    return say("Typing an expression into the REPL:", [
      { name: "write_stdin", arguments: { session_id: replSession, chars: "[1, 2, 3].map((x) => x * 7)\n", yield_time_ms: 1000 } },
    ]);
  }
  if (writes.length === 1 && replSession !== null) {
    return say("It answered. Leaving the REPL:", [
      { name: "write_stdin", arguments: { session_id: replSession, chars: ".exit\n", yield_time_ms: 2000 } },
    ]);
  }
  if (!calls.some((c) => c.name === "exec_command" && c.arguments.cmd === WAKE_COMMAND)) {
    return say("Last, a job that takes a few seconds and wakes me when it exits, so I need not poll:", [
      { name: "exec_command", arguments: { cmd: WAKE_COMMAND, yield_time_ms: 200, timeout_seconds: 60, on_exit: "wake" } },
    ]);
  }
  if (last?.role === "toolResult" && lastCall?.name === "exec_command" && lastCall.arguments.cmd === WAKE_COMMAND) {
    return say("The job is running in the background. I'll stop here; its exit will wake me.");
  }
  if (/preview deployed|exited|session_id/.test(lastText) && !messages.some((m) => m.role === "assistant" && textOf(m).includes("That is the tour"))) {
    return say(
      "The job exited and woke me with its result. That is the tour.\n\n" +
        "Try /monitor (the console of every monitor and shell job), /shell-jobs-sessions, or type \"background\" " +
        "to start two long-running jobs to explore. With an API key, `npm start` uses your own models.",
    );
  }
  return say(
    "I am a scripted demo model, so I can only run the tour. Type \"background\" to start two long-running jobs, " +
      "then open /monitor. Set up a model (e.g. an API key) and run `npm start` again to use pi-jobs for real.",
  );
}
