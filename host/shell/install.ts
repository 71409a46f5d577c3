/**
 * Installs shell jobs into one Pi extension instance: the five tools, the --keep-builtin-bash flag, the system-prompt
 * guidance, codemode receipts, steering, and the handover of the session registry across /reload and session
 * switches. Their wakes are the delivery's (host/delivery/install.ts), on whose ledger the state is made.
 * The human's view of the jobs, /shell-jobs-sessions among it, is the UI's (host/console/install.ts). POSIX only:
 * Windows is not supported.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { Parkable } from "../session/handover.ts";
import { carriesJobs, type InstanceLife } from "../session/instance-life.ts";
import type { JobRuntime } from "../runtime/api.ts";
import { SHELL_JOBS_GUIDANCE } from "./guidance.ts";
import { SHELL_TOOLS, type ShellToolDeclaration } from "./declarations.ts";
import { killText, listText, processResultText, setOnExitText } from "./result-text.ts";
import { ShellService, type CallContext, type ShellServiceOptions } from "./service.ts";
import { stopAllIn } from "./stop.ts";
import { createShellState, type ShellState } from "./state.ts";
import { adoptPersisted } from "./adopt.ts";
import type { Delivery } from "../delivery/install.ts";

export const KEEP_BUILTIN_BASH_FLAG = "keep-builtin-bash";
export const SHELL_TOOL_NAMES = ["exec_command", "write_stdin", "list_sessions", "set_on_exit", "kill_session"] as const;
const REPLACED_BUILTINS = ["bash", "powershell"];

export interface ShellJobsOptions extends Omit<ShellServiceOptions, "runtime"> {
  /** Registered sessions (default 64). */
  capacity?: number;
}

export interface ShellJobs {
  service: ShellService;
}

const PARK_KEY = "shell";

interface ParkedShell extends Parkable {
  state: ShellState;
}

export function installShellJobs(pi: ExtensionAPI, life: InstanceLife, delivery: Delivery, options: ShellJobsOptions = {}): ShellJobs {
  const runtime = (): JobRuntime => life.runtime();
  const fresh = (): ShellState => createShellState({ capacity: options.capacity, ledger: delivery.ledger() });
  const service = new ShellService(fresh(), { ...options, runtime });
  life.onPark(PARK_KEY, () => {
    const state = service.state;
    // Completions while parked are kept in the ledger; the adopting instance schedules their wake.
    state.onCompletion = () => {};
    const parked: ParkedShell = { state, abandon: () => stopAllIn(state) };
    return parked;
  });

  registerTools(pi, service);
  pi.registerFlag(KEEP_BUILTIN_BASH_FLAG, {
    description: "Keep Pi's built-in bash (and powershell) tools active next to the shell-job tools",
    type: "boolean",
    default: false,
  });

  pi.on("session_start", (_event, ctx) => {
    // Parked state exists only after /reload or a session switch: the starts that continue the previous instance's
    // jobs. After /new, /resume or /fork they belong to an earlier session of this Pi (the ledger counts sessions).
    const parked = life.adopted<ParkedShell>(PARK_KEY);
    if (parked) service.state = parked.state;
    else {
      // A fresh Pi: the persisted jobs of its directory are re-attached (or listed, if another Pi owns them).
      adoptPersisted(service, runtime(), ctx.cwd, (line) => ctx.ui.notify(line, "warning"));
    }
    service.state.closing = false;
    service.state.onCompletion = () => delivery.scheduler.schedule();
    if (pi.getFlag(KEEP_BUILTIN_BASH_FLAG) !== true) {
      const active = pi.getActiveTools();
      const kept = active.filter((name) => !REPLACED_BUILTINS.includes(name));
      for (const name of SHELL_TOOL_NAMES) if (!kept.includes(name)) kept.push(name);
      if (kept.length !== active.length || kept.some((name, i) => name !== active[i])) pi.setActiveTools(kept);
    }
  });

  pi.on("session_shutdown", async (event) => {
    // On /reload and session switches the instance's life has parked the state already (onPark above).
    if (carriesJobs(event.reason)) return;
    // Quit: this session's jobs end with it (a persisted job's follower only), and the directory's persisted jobs
    // are free for the next Pi to adopt.
    const ownership = service.state.persisted.ownership;
    await service.stopAll();
    const owned = await ownership;
    if (owned.owned) owned.release();
    service.state = fresh();
  });

  pi.on("before_agent_start", (event) => ({ systemPrompt: `${event.systemPrompt}\n\n${SHELL_JOBS_GUIDANCE}` }));

  // The receipt of a codemode script goes on its outermost result, also when the script failed.
  pi.on("tool_result", (event) => {
    if (event.parentToolCallId !== undefined) return undefined;
    const receipt = service.finalizeScript(event.toolCallId, !event.isError);
    if (receipt === null) return undefined;
    return {
      content: [...event.content, { type: "text" as const, text: receipt }],
      ...(event.structuredContent !== undefined ? { structuredContent: event.structuredContent } : {}),
    };
  });

  pi.on("agent_settled", () => service.releaseScripts());

  pi.on("input", (event) => {
    if (event.source !== "extension" && event.streamingBehavior === "steer") service.steer();
    return undefined;
  });

  return { service };
}

function callOf(toolCallId: string, signal: AbortSignal | undefined, ctx: ExtensionContext): CallContext {
  return { toolCallId, signal, cwd: ctx.cwd };
}

function registerTools(pi: ExtensionAPI, service: ShellService): void {
  const define = <S extends object>(
    declaration: ShellToolDeclaration,
    run: (params: unknown, call: CallContext) => S | Promise<S>,
    text: (result: S) => string,
  ): void => {
    pi.registerTool({
      ...declaration,
      async execute(toolCallId, params, signal, _onUpdate, ctx) {
        const result = await run(params, callOf(toolCallId, signal, ctx));
        return {
          content: [{ type: "text", text: text(result) }],
          details: result,
          structuredContent: result as unknown as Record<string, never>,
        };
      },
    });
  };

  define(SHELL_TOOLS.exec_command, (params, call) => service.exec(params, call), processResultText);
  define(SHELL_TOOLS.write_stdin, (params, call) => service.writeStdin(params, call), processResultText);
  define(SHELL_TOOLS.list_sessions, (params, call) => service.listSessions(params, call), listText);
  define(SHELL_TOOLS.set_on_exit, (params, call) => service.setOnExit(params, call), setOnExitText);
  define(SHELL_TOOLS.kill_session, (params, call) => service.kill(params, call), killText);
}
