/**
 * The regex sandbox's matcher on the actor's side: a worker (regex-sandbox.ts) that owns no native handles, gets
 * lines in batches, and is terminated when a batch overruns its deadline. Only the prefilters run here; the regexes
 * run in the sandbox.
 */
import { Worker } from "node:worker_threads";
import type { RawMatch } from "./raw-match.ts";
import { prefilterOf } from "./pattern.ts";
import { workerUrl } from "../../shared/entry-url.ts";

export interface SandboxOptions {
  /** Longest one batch may take once the sandbox is running; over it the sandbox is terminated. */
  batchDeadlineMs: number;
  /** Longest the sandbox may take to start and compile the patterns. */
  startDeadlineMs: number;
}

export const SANDBOX_DEFAULTS: SandboxOptions = { batchDeadlineMs: 5_000, startDeadlineMs: 30_000 };

/** Lines the sandbox matching (sandbox-matching.ts) may have in flight in one batch. */
export const SANDBOX_BATCH_LINES = 64;

/** A match at `index` of the batch it was found in. */
export interface IndexedMatch {
  index: number;
  match: RawMatch;
}

export interface SandboxMatcher {
  readonly kind: "sandbox";
  /** False when the prefilters rule out both patterns: the line need not be sent at all. */
  mayMatch(text: string, wantSuccess: boolean): boolean;
  /** Matches one batch (≤ SANDBOX_BATCH_LINES); rejects with a MatcherError when the sandbox fails or overruns. */
  match(texts: readonly string[], wantSuccess: boolean): Promise<IndexedMatch[]>;
  dispose(): Promise<void>;
}

export class MatcherError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MatcherError";
  }
}

// ── The sandbox side of the wire (regex-sandbox.ts speaks it) ────────────────────────────────────────────────────

export interface SandboxInit {
  resultPattern: string;
  failurePattern: string | null;
}
export type SandboxRequest = { id: number; texts: readonly string[]; wantSuccess: boolean };
export type SandboxReply =
  | { type: "ready" }
  | { type: "matches"; id: number; matches: IndexedMatch[] }
  | { type: "error"; id: number | null; message: string };

export function createSandboxMatcher(resultPattern: string, failurePattern: string | null, options: SandboxOptions): SandboxMatcher {
  const init: SandboxInit = { resultPattern, failurePattern };
  // The prefilters are plain string searches, safe to run here; the regexes themselves only run in the sandbox.
  const resultFilter = prefilterOf(resultPattern);
  const failureFilter = failurePattern === null ? null : prefilterOf(failurePattern);
  const mayMatch = (text: string, wantSuccess: boolean): boolean =>
    (failurePattern !== null && (failureFilter === null || failureFilter(text))) ||
    (wantSuccess && (resultFilter === null || resultFilter(text)));
  const worker = new Worker(workerUrl("match/regex-sandbox"), {
    workerData: init,
    // A runaway pattern may also try to eat memory; the sandbox gets a small heap of its own.
    resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
    stdout: false,
    stderr: false,
  });
  // The sandbox never keeps the actor's thread alive on its own: a batch in flight holds a deadline timer.
  worker.unref();

  let ready = false;
  let failed: MatcherError | null = null;
  let disposed = false;
  let nextId = 0;
  type Pending = {
    id: number;
    resolve: (matches: IndexedMatch[]) => void;
    reject: (error: MatcherError) => void;
    timer: ReturnType<typeof setTimeout> | null;
  };
  let pending: Pending | null = null;

  // The sandbox holds only two compiled regexes, never a PTY or a process, so it may be ended in the middle of a
  // match; but never while it still loads its modules, which can abort the whole process
  // (docs/decisions/never-terminate.md). An end asked for before it
  // says it is ready happens then.
  let life: "loading" | "loaded" | "exited" = "loading";
  let endWhenLoaded = false;
  const end = async (): Promise<void> => {
    if (life === "loading") endWhenLoaded = true;
    else if (life === "loaded") await worker.terminate();
  };

  const startTimer = setTimeout(
    () => fail(new MatcherError(`the regex sandbox did not start within ${options.startDeadlineMs} ms`)),
    options.startDeadlineMs,
  );

  const fail = (error: MatcherError): void => {
    if (failed !== null) return;
    failed = error;
    clearTimeout(startTimer);
    if (pending !== null) {
      if (pending.timer !== null) clearTimeout(pending.timer);
      pending.reject(error);
      pending = null;
    }
    void end();
  };

  const armDeadline = (batch: Pending): void => {
    batch.timer = setTimeout(
      () => fail(new MatcherError(`a batch of lines took longer than ${options.batchDeadlineMs} ms in the regex sandbox`)),
      options.batchDeadlineMs,
    );
  };

  worker.on("message", (reply: SandboxReply) => {
    if (reply.type === "ready") {
      ready = true;
      life = "loaded";
      if (endWhenLoaded) {
        void worker.terminate();
        return;
      }
      clearTimeout(startTimer);
      // A batch posted before the sandbox was up starts its clock only now: start-up is not matching time.
      if (pending !== null && pending.timer === null) armDeadline(pending);
      return;
    }
    if (reply.type === "error") {
      fail(new MatcherError(`regex sandbox: ${reply.message}`));
      return;
    }
    if (pending === null || reply.id !== pending.id) return;
    const done = pending;
    pending = null;
    if (done.timer !== null) clearTimeout(done.timer);
    done.resolve(reply.matches);
  });
  worker.on("error", (error) => fail(new MatcherError(`regex sandbox crashed: ${error.message}`)));
  worker.on("exit", (code) => {
    life = "exited";
    if (!disposed) fail(new MatcherError(`regex sandbox exited with code ${code}`));
  });

  return {
    kind: "sandbox",
    mayMatch,
    match(texts, wantSuccess) {
      if (failed !== null) return Promise.reject(failed);
      if (disposed) return Promise.reject(new MatcherError("the regex sandbox was disposed"));
      if (pending !== null) return Promise.reject(new MatcherError("one batch at a time"));
      if (texts.length > SANDBOX_BATCH_LINES) {
        return Promise.reject(new MatcherError(`at most ${SANDBOX_BATCH_LINES} lines per batch`));
      }
      return new Promise<IndexedMatch[]>((resolve, reject) => {
        const batch: Pending = { id: nextId++, resolve, reject, timer: null };
        pending = batch;
        const request: SandboxRequest = { id: batch.id, texts, wantSuccess };
        worker.postMessage(request);
        if (ready) armDeadline(batch);
      });
    },
    async dispose() {
      if (disposed) return;
      disposed = true;
      clearTimeout(startTimer);
      if (pending !== null) {
        if (pending.timer !== null) clearTimeout(pending.timer);
        pending.reject(new MatcherError("the regex sandbox was disposed"));
        pending = null;
      }
      await end();
    },
  };
}
