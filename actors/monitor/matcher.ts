/**
 * Compiling and running the two contract patterns without letting a pattern hold the actor hostage.
 *
 * A model-supplied pattern is untrusted: a backtracking regex can run for minutes on one line, and the actor's
 * thread also owns the process, its timers and (for PTY jobs) native handles. So a pattern runs in one of two
 * places (architecture invariant 1):
 *   - inline, compiled with V8's linear-time engine (the `l` flag), when both patterns compile under it: no
 *     input can make it backtrack, so it cannot delay the actor's own timers by more than linear work;
 *   - otherwise in a sandbox worker (regex-sandbox.ts) that owns no native handles, gets lines in batches, and is
 *     terminated when a batch overruns its deadline.
 * Patterns use no flags of their own (no `u`, no `g`): lines are matched one at a time and a stateless `exec`
 * is what both places run.
 *
 * The linear engine pays a fixed cost of a few hundred nanoseconds per `exec`, even on a short line that cannot
 * match (two patterns: about 2.3 M lines/s, against 18 M/s for the backtracking engine). Most output lines cannot
 * match a sentinel, so each pattern first gets a prefilter: a plain substring test for the literal every match must
 * begin with. It changes no verdict and leaves the worst case linear.
 */
import { Worker } from "node:worker_threads";
import type { RawMatch } from "./contract.ts";
import { workerUrl } from "../../shared/entry-url.ts";
import { compileLinear, validatePattern } from "../../shared/linear-regex.ts";

/** A cheap necessary condition for a pattern to match a line: false means it cannot. */
export type Prefilter = (text: string) => boolean;

const META = new Set(["\\", "^", "$", ".", "|", "?", "*", "+", "(", ")", "[", "]", "{", "}"]);
const QUANTIFIER = new Set(["?", "*", "+", "{"]);

/**
 * The literal every match of `source` must begin with, read from the start of the pattern, and whether the match
 * is anchored at the start of the line. Plain groups are transparent (`(?<json>\{.*\})` begins with "{"), and
 * anything that could make a character optional ends the literal before it. Conservative: a pattern with any `|`
 * has none (an alternative could begin differently), an escape counts only for punctuation (`\{`, `\.`), and a
 * lookaround ends the literal.
 */
export function requiredPrefix(source: string): { literal: string; anchored: boolean } | null {
  if (source.includes("|")) return null;
  const anchored = source.startsWith("^");
  let at = anchored ? 1 : 0;
  let literal = "";
  /** Where the last atom (a character or a whole group) begins in `literal`: a quantifier cuts it off. */
  let atomStart = 0;
  /** `literal.length` at each group still open. */
  const open: number[] = [];
  while (at < source.length) {
    const char = source[at] as string;
    if (char === "\\") {
      const next = source[at + 1];
      if (next === undefined || /[0-9A-Za-z]/.test(next) || next.charCodeAt(0) > 0x7e) break;
      atomStart = literal.length;
      literal += next;
      at += 2;
    } else if (char === "(") {
      if (source.startsWith("(?:", at)) at += 3;
      else if (source.startsWith("(?<", at) && source[at + 3] !== "=" && source[at + 3] !== "!") {
        const close = source.indexOf(">", at);
        if (close < 0) break;
        at = close + 1;
      } else if (source[at + 1] === "?") break;
      else at += 1;
      open.push(literal.length);
      continue;
    } else if (char === ")") {
      const groupStart = open.pop();
      if (groupStart === undefined) break;
      atomStart = groupStart;
      at += 1;
    } else if (META.has(char)) {
      break;
    } else {
      atomStart = literal.length;
      literal += char;
      at += 1;
    }
    // `ab*` requires only "a", `(ab)?c` nothing: a quantified atom is optional or repeats.
    if (at < source.length && QUANTIFIER.has(source[at] as string)) {
      literal = literal.slice(0, atomStart);
      break;
    }
  }
  // Stopped inside groups: what was read in them is certain only if none of them turns out optional (`(ab\d)?c`).
  if (open.length > 0) {
    const quantified = quantifiedGroups(source, at, open.length);
    const cut = quantified === null ? 0 : quantified.indexOf(true);
    if (cut >= 0) literal = literal.slice(0, open[cut]);
  }
  return literal === "" ? null : { literal, anchored };
}

/**
 * Reading on from `at`, inside `depth` open groups: for each of them, outermost first, whether a quantifier follows
 * its closing parenthesis. Null when the pattern does not close them all.
 */
function quantifiedGroups(source: string, at: number, depth: number): boolean[] | null {
  const quantified = new Array<boolean>(depth).fill(false);
  let level = depth;
  let nested = 0;
  while (at < source.length && level > 0) {
    const char = source[at] as string;
    if (char === "\\") {
      at += 2;
    } else if (char === "[") {
      // A class ends at its first unescaped "]" (an empty class `[]` included); parentheses in it are literal.
      at += source[at + 1] === "^" ? 2 : 1;
      while (at < source.length && source[at] !== "]") at += source[at] === "\\" ? 2 : 1;
      at += 1;
    } else if (char === "(") {
      nested++;
      at += 1;
    } else if (char === ")") {
      at += 1;
      if (nested > 0) {
        nested--;
      } else {
        level--;
        quantified[level] = at < source.length && QUANTIFIER.has(source[at] as string);
      }
    } else {
      at += 1;
    }
  }
  return level === 0 ? quantified : null;
}

function prefilterOf(source: string): Prefilter | null {
  const prefix = requiredPrefix(source);
  if (prefix === null) return null;
  const { literal, anchored } = prefix;
  return anchored ? (text) => text.startsWith(literal) : (text) => text.includes(literal);
}

/** A compiled pattern with its prefilter: the regex runs only on lines the prefilter lets through. */
export interface Pattern {
  regex: RegExp;
  prefilter: Prefilter | null;
}

function pattern(source: string, regex: RegExp): Pattern {
  return { regex, prefilter: prefilterOf(source) };
}

function run(pattern: Pattern, text: string): RegExpExecArray | null {
  if (pattern.prefilter !== null && !pattern.prefilter(text)) return null;
  return pattern.regex.exec(text);
}

/**
 * One line against the contract: the failure pattern first, because on one line a failure beats a success.
 * `wantSuccess` false skips the success pattern (the contract no longer cares). Allocates only on a match.
 */
export function matchLine(result: Pattern, failure: Pattern | null, text: string, wantSuccess: boolean): RawMatch | null {
  if (failure !== null) {
    const found = run(failure, text);
    if (found !== null) return { kind: "failure", text: found[0], groups: found.groups ?? null };
  }
  if (!wantSuccess) return null;
  const found = run(result, text);
  return found === null ? null : { kind: "success", text: found[0], groups: found.groups ?? null };
}

/** Compiles a pattern the way both the actor and the sandbox run it. */
export function compilePattern(source: string, flags: "" | "l"): Pattern {
  return pattern(source, new RegExp(source, flags));
}

export interface InlineMatcher {
  readonly kind: "inline";
  match(text: string, wantSuccess: boolean): RawMatch | null;
}

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

export type Matcher = InlineMatcher | SandboxMatcher;

export class MatcherError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MatcherError";
  }
}

/** Where each contract runs; an `error` means a pattern does not compile at all. */
export function createMatcher(
  resultPattern: string,
  failurePattern: string | null,
  options: Partial<SandboxOptions> = {},
): { ok: true; matcher: Matcher } | { ok: false; error: string } {
  for (const [field, source] of [["result_pattern", resultPattern], ["failure_pattern", failurePattern]] as const) {
    if (source === null) continue;
    const valid = validatePattern(source);
    if (!valid.ok) return { ok: false, error: `${field}: ${valid.error}` };
  }
  const linearResult = compileLinear(resultPattern);
  const linearFailure = failurePattern === null ? null : compileLinear(failurePattern);
  if (linearResult !== null && (failurePattern === null || linearFailure !== null)) {
    const result = pattern(resultPattern, linearResult);
    const failure = failurePattern === null || linearFailure === null ? null : pattern(failurePattern, linearFailure);
    return { ok: true, matcher: { kind: "inline", match: (text, wantSuccess) => matchLine(result, failure, text, wantSuccess) } };
  }
  return { ok: true, matcher: createSandboxMatcher(resultPattern, failurePattern, { ...SANDBOX_DEFAULTS, ...options }) };
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

function createSandboxMatcher(resultPattern: string, failurePattern: string | null, options: SandboxOptions): SandboxMatcher {
  const init: SandboxInit = { resultPattern, failurePattern };
  // The prefilters are plain string searches, safe to run here; the regexes themselves only run in the sandbox.
  const resultFilter = prefilterOf(resultPattern);
  const failureFilter = failurePattern === null ? null : prefilterOf(failurePattern);
  const mayMatch = (text: string, wantSuccess: boolean): boolean =>
    (failurePattern !== null && (failureFilter === null || failureFilter(text))) ||
    (wantSuccess && (resultFilter === null || resultFilter(text)));
  const worker = new Worker(workerUrl("monitor/regex-sandbox"), {
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
