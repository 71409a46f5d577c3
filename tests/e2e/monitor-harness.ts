/**
 * Real Pi in the test process for the monitor tests, with the two things the shared SDK harness does not offer:
 * the extension `mode` Pi binds (the SDK binds "print" unless told otherwise, and monitor delivery depends on it),
 * and a record of every request the scripted model received, so a test can check exactly what the model saw.
 *
 * Extensions load through Pi's own loader from their paths (as in production); the agent dir, auth and settings
 * live in a fresh temp dir, and the process-wide Pi environment points at a private dir while a session lives.
 */
import {
  fauxAssistantMessage,
  fauxProvider,
  fauxText,
  fauxToolCall,
  type FauxProviderHandle,
  type FauxResponseFactory,
  type Message,
  type ToolCall,
} from "@earendil-works/pi-ai";
import {
  createAgentSession,
  createCodemodeExtension,
  createEventBus,
  DefaultResourceLoader,
  ModelRuntime,
  SessionManager,
  SettingsManager,
  type AgentSession,
  type AgentSessionEvent,
  type ExtensionUIContext,
} from "@earendil-works/pi-coding-agent";
import { isAbsolute, join, resolve } from "node:path";
import { FAUX_MODEL, FAUX_PROVIDER } from "../fixtures/faux-provider.ts";
import { makeTempDir, PI_JOBS_ENTRY, removeDir, REPO_ROOT } from "./harness/paths.ts";
import { DEFAULT_WAIT_MS, pollUntil } from "./harness/wait.ts";

export type ExtensionMode = "tui" | "rpc" | "json" | "print";

export interface MonitorSessionOptions {
  /** The mode Pi binds extensions in; "print" (no UI host) unless given. */
  mode?: ExtensionMode;
  /** Load Pi's codemode extension and make the `codemode` tool active. */
  codemode?: boolean;
  /** Extension paths loaded after pi-jobs (absolute, or relative to the repository root). */
  extensions?: string[];
  /** Leave pi-jobs itself out (a session that only holds restored history, for example). */
  withoutPiJobs?: boolean;
  /** Persist the session here; with `sessionFile`, reopen that file. */
  sessionDir?: string;
  sessionFile?: string;
  /** Working directory; a fresh temp dir (removed on dispose) when omitted. */
  cwd?: string;
  /** Bind a UI whose `notify` lands here (commands such as /jobs report through it); every other UI call is a no-op. */
  onNotify?: (message: string) => void;
}

/** One request as the scripted model received it. */
export interface ModelRequest {
  messages: Message[];
}

export interface MonitorSession {
  session: AgentSession;
  faux: FauxProviderHandle;
  cwd: string;
  readonly events: readonly AgentSessionEvent[];
  /** Every request the model received, in order. */
  readonly requests: readonly ModelRequest[];
  /** Queue model answers (see `callTools`, `answer`). */
  script(...steps: FauxResponseFactory[]): void;
  prompt(text: string): Promise<void>;
  waitFor(predicate: (event: AgentSessionEvent, index: number) => boolean, timeoutMs?: number): Promise<AgentSessionEvent>;
  waitForSettled(count: number, timeoutMs?: number): Promise<void>;
  settledCount(): number;
  /** Events since a mark (an index into `events`). */
  since(mark: number): AgentSessionEvent[];
  /** session_shutdown (reason "quit") as the CLI sends on exit, then dispose and remove temp dirs. */
  dispose(): Promise<void>;
}

const ENV_KEYS = ["PI_CODING_AGENT_DIR", "PI_CODING_AGENT_SESSION_DIR", "PI_OFFLINE", "PI_SKIP_VERSION_CHECK", "PI_TELEMETRY"] as const;
let holders = 0;
let savedEnv: Partial<Record<(typeof ENV_KEYS)[number], string | undefined>> = {};
let envDir: string | undefined;

function holdEnv(): void {
  holders += 1;
  if (holders > 1) return;
  savedEnv = Object.fromEntries(ENV_KEYS.map((key) => [key, process.env[key]]));
  envDir = makeTempDir("monitor-env");
  process.env.PI_CODING_AGENT_DIR = envDir;
  delete process.env.PI_CODING_AGENT_SESSION_DIR;
  process.env.PI_OFFLINE = "1";
  process.env.PI_SKIP_VERSION_CHECK = "1";
  process.env.PI_TELEMETRY = "0";
}

function releaseEnv(): void {
  holders -= 1;
  if (holders > 0) return;
  for (const key of ENV_KEYS) {
    const value = savedEnv[key];
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  if (envDir !== undefined) removeDir(envDir);
  envDir = undefined;
}

export async function startMonitorSession(options: MonitorSessionOptions = {}): Promise<MonitorSession> {
  holdEnv();
  const owned: string[] = [];
  const agentDir = makeTempDir("monitor-agent");
  owned.push(agentDir);
  const cwd = options.cwd ?? makeTempDir("monitor-cwd");
  if (options.cwd === undefined) owned.push(cwd);
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    for (const dir of owned) removeDir(dir);
    releaseEnv();
  };

  try {
    const requests: ModelRequest[] = [];
    const faux = fauxProvider({ provider: FAUX_PROVIDER, models: [{ id: FAUX_MODEL }] });
    const record = (step: FauxResponseFactory): FauxResponseFactory => (context, ...rest) => {
      requests.push({ messages: [...context.messages] });
      return step(context, ...rest);
    };
    const modelRuntime = await ModelRuntime.create({
      authPath: join(agentDir, "auth.json"),
      modelsPath: null,
      modelsStorePath: join(agentDir, "models-store.json"),
      refreshOnCreate: false,
    });
    modelRuntime.registerNativeProvider(faux.provider);
    const settingsManager = SettingsManager.inMemory();
    const paths = [...(options.withoutPiJobs === true ? [] : [PI_JOBS_ENTRY]), ...(options.extensions ?? [])];
    const resourceLoader = new DefaultResourceLoader({
      cwd,
      agentDir,
      settingsManager,
      eventBus: createEventBus(),
      noExtensions: true,
      noSkills: true,
      noPromptTemplates: true,
      noThemes: true,
      noContextFiles: true,
      additionalExtensionPaths: paths.map((path) => (isAbsolute(path) ? path : resolve(REPO_ROOT, path))),
      ...(options.codemode === true ? { extensionFactories: [createCodemodeExtension()] } : {}),
    });
    await resourceLoader.reload();
    const errors = resourceLoader.getExtensions().errors;
    if (errors.length > 0) throw new Error(`extension load failed:\n${errors.map((e) => `${e.path}: ${e.error}`).join("\n")}`);

    const sessionManager =
      options.sessionFile !== undefined
        ? SessionManager.open(options.sessionFile, options.sessionDir)
        : options.sessionDir !== undefined
          ? SessionManager.create(cwd, options.sessionDir)
          : SessionManager.inMemory(cwd);
    const { session } = await createAgentSession({
      cwd,
      agentDir,
      modelRuntime,
      model: faux.getModel(),
      thinkingLevel: "off",
      resourceLoader,
      settingsManager,
      sessionManager,
      ...(options.codemode === true ? { tools: ["+codemode"] } : {}),
    });

    const events: AgentSessionEvent[] = [];
    const unsubscribe = session.subscribe((event) => void events.push(event));
    let disposed = false;
    const dispose = async (): Promise<void> => {
      if (disposed) return;
      disposed = true;
      let failure: unknown;
      try {
        await session.abort();
      } catch (error) {
        failure ??= error;
      }
      try {
        const runner = session.extensionRunner;
        if (runner.hasHandlers("session_shutdown")) await runner.emit({ type: "session_shutdown", reason: "quit" });
      } catch (error) {
        failure ??= error;
      }
      unsubscribe();
      try {
        session.dispose();
      } finally {
        release();
      }
      if (failure !== undefined) throw failure;
    };
    try {
      await session.bindExtensions({
        mode: options.mode ?? "print",
        ...(options.onNotify === undefined ? {} : { uiContext: notifyingUi(options.onNotify) }),
      });
    } catch (error) {
      await dispose();
      throw error;
    }

    const describe = (): string =>
      events
        .slice(-30)
        .map((event) => event.type)
        .join(", ");
    const settledCount = (): number => events.filter((event) => event.type === "agent_settled").length;
    return {
      session,
      faux,
      cwd,
      events,
      requests,
      script: (...steps) => faux.appendResponses(steps.map(record)),
      prompt: (text) => session.prompt(text),
      waitFor: (predicate, timeoutMs = DEFAULT_WAIT_MS) =>
        pollUntil(() => events.find(predicate), { timeoutMs, what: "a matching session event", describe }),
      waitForSettled: async (count, timeoutMs = DEFAULT_WAIT_MS) => {
        await pollUntil(() => settledCount() >= count, { timeoutMs, what: `${count} agent_settled event(s)`, describe });
      },
      settledCount,
      since: (mark) => events.slice(mark),
      dispose,
    };
  } catch (error) {
    release();
    throw error;
  }
}

/** A UI host that only listens: notify is recorded, anything else does nothing and answers nothing. */
function notifyingUi(onNotify: (message: string) => void): ExtensionUIContext {
  const quiet = (): undefined => undefined;
  const never = async (): Promise<undefined> => undefined;
  // Pi copies the UI object's own properties, so every method is spelled out.
  const ui: Record<string, unknown> = {
    notify: (message: string) => onNotify(message),
    select: never,
    confirm: async () => false,
    input: never,
    editor: never,
    custom: never,
    onTerminalInput: () => quiet,
    getEditorText: () => "",
    getAllThemes: () => [],
    setTheme: () => ({ success: false, error: "no UI" }),
    getToolsExpanded: () => false,
  };
  for (const name of [
    "setStatus", "setWorkingMessage", "setWorkingVisible", "setWorkingIndicator", "setHiddenThinkingLabel", "setWidget",
    "setFooter", "setHeader", "setTitle", "pasteToEditor", "setEditorText", "addAutocompleteProvider",
    "setEditorComponent", "getEditorComponent", "getTheme", "setToolsExpanded",
  ]) {
    ui[name] = quiet;
  }
  return ui as unknown as ExtensionUIContext;
}

// ── Scripted answers ────────────────────────────────────────────────────────────────────────────────────────────

export interface Call {
  name: string;
  arguments: ToolCall["arguments"];
  id?: string;
}

/** The model calls these tools, all in one assistant message (one tool batch). */
export function callTools(...calls: Call[]): FauxResponseFactory {
  return () =>
    fauxAssistantMessage(
      calls.map((call) => fauxToolCall(call.name, call.arguments, call.id === undefined ? {} : { id: call.id })),
      { stopReason: "toolUse" },
    );
}

export function monitorCall(args: Record<string, unknown>, id?: string): Call {
  return { name: "monitor_start", arguments: args as ToolCall["arguments"], ...(id === undefined ? {} : { id }) };
}

/** The model answers with text and ends its run. */
export function answer(text = "ok"): FauxResponseFactory {
  return () => fauxAssistantMessage([fauxText(text)], { stopReason: "stop" });
}

// ── Reading what happened ───────────────────────────────────────────────────────────────────────────────────────

/** Plain text of a message's content, whatever its role. */
export function textOf(message: { content?: unknown } | undefined): string {
  const content = message?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((block: { type?: string; text?: string }) => (block.type === "text" ? (block.text ?? "") : "")).join("");
}

/** The system prompt text a request carried: every system message's content and sections. */
export function systemTextOf(request: ModelRequest): string {
  return request.messages
    .filter((message) => (message as { role: string }).role === "system")
    .map((message) => {
      const system = message as unknown as { content: unknown; sections?: Record<string, string | null> };
      return [textOf(system), ...Object.values(system.sections ?? {}).filter((s): s is string => typeof s === "string")].join("\n");
    })
    .join("\n");
}

type ToolEnd = Extract<AgentSessionEvent, { type: "tool_execution_end" }>;

export function toolEnds(events: readonly AgentSessionEvent[], name = "monitor_start"): ToolEnd[] {
  return events.filter((event): event is ToolEnd => event.type === "tool_execution_end" && event.toolName === name);
}

/** Custom messages the session recorded (message_end of role "custom"), optionally of one type. */
export function customMessages(events: readonly AgentSessionEvent[], customType?: string): { content: unknown; details: unknown; customType: string }[] {
  return events
    .filter((event) => event.type === "message_end")
    .map((event) => (event as { message: { role: string } }).message)
    .filter((message): message is Message & { role: "custom" } => (message as { role: string }).role === "custom")
    .map((message) => message as unknown as { content: unknown; details: unknown; customType: string })
    .filter((message) => customType === undefined || message.customType === customType);
}
