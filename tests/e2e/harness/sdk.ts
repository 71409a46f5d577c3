/**
 * Real Pi in the test process: an AgentSession built the way the CLI builds one, with extensions loaded from
 * their paths by Pi's own loader (as in production), answered by the scripted faux model. Fast and
 * deterministic, so most end-to-end tests take this shape.
 *
 * The harness records what a test needs to check from outside: every session event, every request the model
 * received (whichever way its answer was queued), and every error Pi's extension runner reported.
 *
 * Isolation: the session's agent dir, auth, model store and settings live in a fresh temp dir; nothing reads the
 * user's ~/.pi. As a backstop for code that asks Pi for "the agent dir" without being handed one, the process
 * environment points PI_CODING_AGENT_DIR at a private temp dir too.
 */
import {
  fauxProvider,
  type FauxProviderHandle,
  type FauxResponseFactory,
  type FauxResponseStep,
  type Message,
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
  type EventBus,
  type ExtensionContext,
  type ExtensionError,
  type ExtensionUIContext,
  type InlineExtension,
} from "@earendil-works/pi-coding-agent";
import { isAbsolute, join, resolve } from "node:path";
import { FAUX_MODEL, FAUX_PROVIDER, scriptedResponses, type FauxStep } from "../../fixtures/faux-provider.ts";
import { makeTempDir, PI_JOBS_ENTRY, removeDir, REPO_ROOT } from "./paths.ts";
import { quietUi } from "./quiet-ui.ts";
import { DEFAULT_WAIT_MS, pollUntil } from "./wait.ts";

type Script =
  | { responses: FauxResponseStep[]; steps?: never }
  | { steps: FauxStep[]; responses?: never }
  | { responses?: never; steps?: never };

export type SdkSessionOptions = Script & {
  /** Working directory of the session; a fresh temp dir (removed on dispose) when omitted. */
  cwd?: string;
  /**
   * Extension paths (absolute, or relative to the repository root), loaded in order through Pi's own loader.
   * pi-jobs itself when omitted; `[]` leaves it out (a session that only holds restored history, for example).
   */
  extensions?: string[];
  /** Extensions given as factories (an instrumented bridge, say), loaded after the paths. */
  extensionFactories?: InlineExtension[];
  /** Load Pi's codemode extension and make the `codemode` tool active. */
  codemode?: boolean;
  /** Persist the session under this directory (else in memory). */
  sessionDir?: string;
  /** Resume this persisted session file (with `sessionDir`, or the file's own directory). */
  sessionFile?: string;
  /** Faux streaming speed; all at once when omitted. */
  tokensPerSecond?: number;
  /** The mode extensions see (`ctx.mode`); "print" when omitted, as Pi's SDK binds it. */
  mode?: ExtensionContext["mode"];
  /**
   * Bind a UI host made of these methods (commands such as /jobs report through `notify`); every other UI call
   * does nothing and answers nothing. Without it Pi binds no UI, as its SDK does.
   */
  ui?: Partial<ExtensionUIContext>;
};

/** One request as the scripted model received it. */
export interface ModelRequest {
  messages: Message[];
}

export interface SdkSession {
  session: AgentSession;
  /** The scripted model: append responses mid-test, read its call count. Every answer it gives is recorded. */
  faux: FauxProviderHandle;
  eventBus: EventBus;
  cwd: string;
  agentDir: string;
  /** Resolved paths of the extensions Pi loaded from files (inline ones such as codemode are not listed). */
  extensionPaths: string[];
  /** Every event from `session.subscribe`, in order. */
  readonly events: readonly AgentSessionEvent[];
  /** Every request the model received, in order. */
  readonly requests: readonly ModelRequest[];
  /** Every error Pi's extension runner reported (a throwing handler, a failed command), in order. */
  readonly extensionErrors: readonly ExtensionError[];
  /** Queue model answers after those already queued. */
  script(...steps: FauxResponseStep[]): void;
  /** `session.prompt`: resolves when the run settles (or at once for a command that starts none). */
  prompt(text: string): Promise<void>;
  /** First recorded event (past or future) matching `predicate`; `index` lets a test look only past a mark. */
  waitFor(predicate: (event: AgentSessionEvent, index: number) => boolean, timeoutMs?: number): Promise<AgentSessionEvent>;
  /** Until at least `count` agent_settled events have been seen. */
  waitForSettled(count: number, timeoutMs?: number): Promise<void>;
  settledCount(): number;
  /** Events since a mark (an index into `events`). */
  since(mark: number): AgentSessionEvent[];
  eventsOf<K extends AgentSessionEvent["type"]>(type: K): Extract<AgentSessionEvent, { type: K }>[];
  /** Emits session_shutdown (reason "quit") as the CLI does on exit, disposes the session, removes temp dirs. */
  dispose(): Promise<void>;
}

const PROCESS_ENV_KEYS = ["PI_CODING_AGENT_DIR", "PI_CODING_AGENT_SESSION_DIR", "PI_OFFLINE", "PI_SKIP_VERSION_CHECK", "PI_TELEMETRY"] as const;
let liveSessions = 0;
let envBackup: Partial<Record<(typeof PROCESS_ENV_KEYS)[number], string | undefined>> = {};
let envAgentDir: string | undefined;

/** Points the process-wide Pi environment at a private dir while any session is live; the last dispose restores it. */
export function acquireProcessEnv(): void {
  liveSessions += 1;
  if (liveSessions > 1) return;
  envBackup = Object.fromEntries(PROCESS_ENV_KEYS.map((key) => [key, process.env[key]]));
  envAgentDir = makeTempDir("agent-env");
  process.env.PI_CODING_AGENT_DIR = envAgentDir;
  delete process.env.PI_CODING_AGENT_SESSION_DIR;
  process.env.PI_OFFLINE = "1";
  process.env.PI_SKIP_VERSION_CHECK = "1";
  process.env.PI_TELEMETRY = "0";
}

export function releaseProcessEnv(): void {
  liveSessions -= 1;
  if (liveSessions > 0) return;
  for (const key of PROCESS_ENV_KEYS) {
    const value = envBackup[key];
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  if (envAgentDir !== undefined) removeDir(envAgentDir);
  envAgentDir = undefined;
}

function describeEvents(events: readonly AgentSessionEvent[]): string {
  return events
    .slice(-30)
    .map((event) => event.type)
    .join(", ");
}

/**
 * The faux handle with its queueing wrapped, so each answer notes the request it answers: a test that appends
 * through `faux` directly is recorded too.
 */
export function recordingFaux(faux: FauxProviderHandle, requests: ModelRequest[]): FauxProviderHandle {
  const record =
    (step: FauxResponseStep): FauxResponseFactory =>
    (context, ...rest) => {
      requests.push({ messages: [...context.messages] });
      return typeof step === "function" ? step(context, ...rest) : step;
    };
  return {
    ...faux,
    setResponses: (steps) => faux.setResponses(steps.map(record)),
    appendResponses: (steps) => faux.appendResponses(steps.map(record)),
  };
}

/** A model runtime in `agentDir` (nothing of the user's) that knows only the faux provider. */
export async function fauxModelRuntime(agentDir: string, faux: FauxProviderHandle): Promise<ModelRuntime> {
  const modelRuntime = await ModelRuntime.create({
    authPath: join(agentDir, "auth.json"),
    modelsPath: null,
    modelsStorePath: join(agentDir, "models-store.json"),
    refreshOnCreate: false,
  });
  modelRuntime.registerNativeProvider(faux.provider);
  return modelRuntime;
}

export async function startSdkSession(options: SdkSessionOptions = {}): Promise<SdkSession> {
  acquireProcessEnv();
  const ownedDirs: string[] = [];
  const agentDir = makeTempDir("agent");
  ownedDirs.push(agentDir);
  let cwd = options.cwd;
  if (cwd === undefined) {
    cwd = makeTempDir("cwd");
    ownedDirs.push(cwd);
  }
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    for (const dir of ownedDirs) removeDir(dir);
    releaseProcessEnv();
  };

  try {
    const requests: ModelRequest[] = [];
    const faux = recordingFaux(
      fauxProvider({
        provider: FAUX_PROVIDER,
        models: [{ id: FAUX_MODEL }],
        ...(options.tokensPerSecond === undefined ? {} : { tokensPerSecond: options.tokensPerSecond }),
      }),
      requests,
    );
    faux.setResponses(options.responses ?? scriptedResponses(options.steps ?? []));

    const modelRuntime = await fauxModelRuntime(agentDir, faux);

    const settingsManager = SettingsManager.inMemory();
    const eventBus = createEventBus();
    const factories = [...(options.codemode === true ? [createCodemodeExtension()] : []), ...(options.extensionFactories ?? [])];
    const resourceLoader = new DefaultResourceLoader({
      cwd,
      agentDir,
      settingsManager,
      eventBus,
      noExtensions: true,
      noSkills: true,
      noPromptTemplates: true,
      noThemes: true,
      noContextFiles: true,
      additionalExtensionPaths: (options.extensions ?? [PI_JOBS_ENTRY]).map((path) => (isAbsolute(path) ? path : resolve(REPO_ROOT, path))),
      ...(factories.length > 0 ? { extensionFactories: factories } : {}),
    });
    await resourceLoader.reload();
    const loaded = resourceLoader.getExtensions();
    const loadErrors = loaded.errors;
    if (loadErrors.length > 0) {
      throw new Error(`extension load failed:\n${loadErrors.map((e) => `${e.path}: ${e.error}`).join("\n")}`);
    }

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
    // Subscribe before session_start so nothing an extension does on startup is missed.
    const unsubscribe = session.subscribe((event) => {
      events.push(event);
    });
    let disposed = false;
    const dispose = async (): Promise<void> => {
      if (disposed) return;
      disposed = true;
      // Each step runs even if an earlier one failed; the first failure is reported after cleanup.
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

    const extensionErrors: ExtensionError[] = [];
    try {
      await session.bindExtensions({
        ...(options.mode === undefined ? {} : { mode: options.mode }),
        ...(options.ui === undefined ? {} : { uiContext: quietUi(options.ui) }),
        onError: (error) => void extensionErrors.push(error),
      });
    } catch (error) {
      await dispose();
      throw error;
    }

    const settledCount = (): number => events.filter((event) => event.type === "agent_settled").length;
    return {
      session,
      faux,
      eventBus,
      cwd,
      agentDir,
      extensionPaths: loaded.extensions.map((extension) => extension.resolvedPath),
      events,
      requests,
      extensionErrors,
      script: (...steps) => faux.appendResponses(steps),
      prompt: (text) => session.prompt(text),
      waitFor: (predicate, timeoutMs = DEFAULT_WAIT_MS) =>
        pollUntil(() => events.find(predicate), {
          timeoutMs,
          what: "a matching session event",
          describe: () => describeEvents(events),
        }),
      waitForSettled: async (count, timeoutMs = DEFAULT_WAIT_MS) => {
        await pollUntil(() => settledCount() >= count, {
          timeoutMs,
          what: `${count} agent_settled event(s)`,
          describe: () => describeEvents(events),
        });
      },
      settledCount,
      since: (mark) => events.slice(mark),
      eventsOf: <K extends AgentSessionEvent["type"]>(type: K) =>
        events.filter((event): event is Extract<AgentSessionEvent, { type: K }> => event.type === type),
      dispose,
    };
  } catch (error) {
    release();
    throw error;
  }
}

/** The shell jobs' wake messages the session delivered, in order: their text and details. */
export function wakeMessages(sdk: Pick<SdkSession, "eventsOf">): { content: string; details: any }[] {
  return sdk
    .eventsOf("message_end")
    .map((e) => e.message as unknown as { role: string; customType?: string; content: unknown; details?: unknown })
    .filter((m) => m.role === "custom" && m.customType === "shell-jobs-wake")
    .map((m) => ({ content: typeof m.content === "string" ? m.content : JSON.stringify(m.content), details: m.details }));
}
