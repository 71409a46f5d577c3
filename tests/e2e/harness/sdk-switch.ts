/**
 * Real Pi with session switches: an AgentSessionRuntime built the way the CLI builds one, so that `/new`, `/resume`
 * and `/fork` tear the session down (session_shutdown with their reason), load the extensions afresh through Pi's own
 * loader and start the next session (session_start), as they do for a user. One scripted faux model serves every
 * session of the runtime, so a script runs on across a switch. The sessions are persisted in a temp dir (a resume
 * needs a session file); everything is removed on dispose.
 */
import { fauxProvider, type FauxProviderHandle, type FauxResponseStep } from "@earendil-works/pi-ai";
import {
  createAgentSessionFromServices,
  createAgentSessionRuntime,
  createAgentSessionServices,
  SessionManager,
  SettingsManager,
  type AgentSession,
  type AgentSessionEvent,
  type AgentSessionRuntime,
  type CreateAgentSessionRuntimeFactory,
  type ExtensionError,
} from "@earendil-works/pi-coding-agent";
import { isAbsolute, resolve } from "node:path";
import { FAUX_MODEL, FAUX_PROVIDER } from "../../fixtures/faux-provider.ts";
import { makeTempDir, PI_JOBS_ENTRY, removeDir, REPO_ROOT } from "./paths.ts";
import { acquireProcessEnv, fauxModelRuntime, recordingFaux, releaseProcessEnv, type ModelRequest } from "./sdk.ts";
import { DEFAULT_WAIT_MS, pollUntil } from "./wait.ts";

export interface SwitchableSession {
  runtime: AgentSessionRuntime;
  /** The current session (a new object after each switch). */
  readonly session: AgentSession;
  faux: FauxProviderHandle;
  cwd: string;
  /** Every event of every session, in order. */
  readonly events: readonly AgentSessionEvent[];
  readonly extensionErrors: readonly ExtensionError[];
  prompt(text: string): Promise<void>;
  waitForSettled(count: number, timeoutMs?: number): Promise<void>;
  eventsOf<K extends AgentSessionEvent["type"]>(type: K): Extract<AgentSessionEvent, { type: K }>[];
  /** The id of the newest user message of the current session (a fork point). */
  lastUserEntryId(): string;
  /** Quits as the CLI does (session_shutdown "quit"), then removes the temp dirs. */
  dispose(): Promise<void>;
}

/** `mode`: the mode Pi runs in, as the extensions see it (as an interactive user's, "tui", a monitor's report wakes). */
export async function startSwitchableSession(options: { responses: FauxResponseStep[]; extensions?: string[]; mode?: "tui" | "rpc" }): Promise<SwitchableSession> {
  acquireProcessEnv();
  const agentDir = makeTempDir("agent");
  const cwd = makeTempDir("cwd");
  const sessionDir = makeTempDir("sessions");
  const release = (): void => {
    for (const dir of [agentDir, cwd, sessionDir]) removeDir(dir);
    releaseProcessEnv();
  };
  try {
    const requests: ModelRequest[] = [];
    const faux = recordingFaux(fauxProvider({ provider: FAUX_PROVIDER, models: [{ id: FAUX_MODEL }] }), requests);
    faux.setResponses(options.responses);
    const modelRuntime = await fauxModelRuntime(agentDir, faux);
    const settingsManager = SettingsManager.inMemory();
    const extensionPaths = (options.extensions ?? [PI_JOBS_ENTRY]).map((path) => (isAbsolute(path) ? path : resolve(REPO_ROOT, path)));

    // Called for the first session and again by every switch, as the CLI's factory is.
    const createRuntime: CreateAgentSessionRuntimeFactory = async ({ cwd: sessionCwd, sessionManager, sessionStartEvent }) => {
      const services = await createAgentSessionServices({
        cwd: sessionCwd,
        agentDir,
        settingsManager,
        modelRuntime,
        resourceLoaderOptions: {
          noExtensions: true,
          noSkills: true,
          noPromptTemplates: true,
          noThemes: true,
          noContextFiles: true,
          additionalExtensionPaths: extensionPaths,
        },
      });
      const errors = services.resourceLoader.getExtensions().errors;
      if (errors.length > 0) throw new Error(`extension load failed:\n${errors.map((e) => `${e.path}: ${e.error}`).join("\n")}`);
      const created = await createAgentSessionFromServices({
        services,
        sessionManager,
        ...(sessionStartEvent === undefined ? {} : { sessionStartEvent }),
        model: faux.getModel(),
        thinkingLevel: "off",
      });
      return { ...created, services, diagnostics: services.diagnostics };
    };
    const runtime = await createAgentSessionRuntime(createRuntime, { cwd, agentDir, sessionManager: SessionManager.create(cwd, sessionDir) });

    const events: AgentSessionEvent[] = [];
    const extensionErrors: ExtensionError[] = [];
    let unsubscribe = (): void => {};
    const bind = async (): Promise<void> => {
      unsubscribe();
      // Subscribe before session_start so nothing an extension does on startup is missed.
      unsubscribe = runtime.session.subscribe((event) => void events.push(event));
      await runtime.session.bindExtensions({ ...(options.mode === undefined ? {} : { mode: options.mode }), onError: (error) => void extensionErrors.push(error) });
    };
    runtime.setRebindSession(bind);
    await bind();

    let disposed = false;
    const settledCount = (): number => events.filter((event) => event.type === "agent_settled").length;
    return {
      runtime,
      get session() {
        return runtime.session;
      },
      faux,
      cwd,
      events,
      extensionErrors,
      prompt: (text) => runtime.session.prompt(text),
      waitForSettled: (count, timeoutMs = DEFAULT_WAIT_MS) =>
        pollUntil(() => settledCount() >= count || undefined, { timeoutMs, what: `${count} agent_settled event(s)` }).then(() => undefined),
      eventsOf: <K extends AgentSessionEvent["type"]>(type: K) =>
        events.filter((event): event is Extract<AgentSessionEvent, { type: K }> => event.type === type),
      lastUserEntryId: () => {
        const entry = runtime.session.sessionManager
          .getEntries()
          .filter((e) => e.type === "message" && e.message.role === "user")
          .at(-1);
        if (entry === undefined) throw new Error("the session holds no user message to fork at");
        return entry.id;
      },
      dispose: async () => {
        if (disposed) return;
        disposed = true;
        try {
          await runtime.dispose();
        } finally {
          unsubscribe();
          release();
        }
      },
    };
  } catch (error) {
    release();
    throw error;
  }
}
