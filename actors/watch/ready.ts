/**
 * When is a job that keeps running ready? The actor feeds it the job's output; it checks the conditions of the
 * spec (all of them must hold): a line matching `pattern` (complete lines, or a partial line once it has been idle),
 * a process of the job listening on `port`, and an HTTP GET of `http` answering below 500. It reports once: ready, or
 * timeout. The pattern runs like a contract pattern (actors/match/matcher.ts): V8's linear engine inline, or the
 * sandbox.
 */
import type { ReadySpec } from "../../mailbox/spec.ts";
import type { ReadyReport } from "../../mailbox/messages.ts";
import { createMatcher, type Matcher } from "../match/matcher.ts";
import { processTable } from "../../shared/process-table/index.ts";
import { acceptsConnections } from "./connect-probe.ts";
import { stripEscapes } from "./prompt-detect.ts";

/** How often the port and the URL are checked. */
const POLL_MS = 250;
/** A partial line idle this long is matched as it is (a prompt-like "ready" banner without a newline). */
const PARTIAL_IDLE_MS = 300;
/** One GET may take this long before it counts as "not answering yet". */
const HTTP_ATTEMPT_MS = 2_000;
/** Longest line kept for matching; the rest of a longer line is not looked at. */
const MAX_LINE_CHARS = 64 * 1024;
/** Lines waiting for the sandbox; beyond this a burst is skipped rather than held in memory. */
const MAX_QUEUED_LINES = 1_024;

export interface ReadyWatchOptions {
  spec: ReadySpec;
  /** Monotonic ms when the process was spawned: elapsed_ms counts from there. */
  spawnedAt: number;
  /** The job's live processes (for the port lookup). */
  pids(): Promise<readonly number[]>;
  report(report: ReadyReport): void;
}

type Source = "stdout" | "stderr" | "pty";

export class ReadyWatch {
  private readonly options: ReadyWatchOptions;
  private readonly spec: ReadySpec;
  private matcher: Matcher | null = null;
  private matched: { text: string; captures: Record<string, string> | null } | null = null;
  private portSeen = false;
  private checkingHttp = false;
  private done = false;
  private readonly partial = new Map<Source, string>();
  private readonly decoders = new Map<Source, InstanceType<typeof TextDecoder>>();
  private partialTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly poll: ReturnType<typeof setInterval> | null;
  private readonly deadline: ReturnType<typeof setTimeout>;
  private queue: string[] = [];
  private matching = false;

  constructor(options: ReadyWatchOptions) {
    this.options = options;
    this.spec = options.spec;
    if (this.spec.pattern !== null) {
      const made = createMatcher(this.spec.pattern, null);
      // The host validated the pattern; a failure here still must not pass silently.
      if (!made.ok) throw new Error(`ready.pattern: ${made.error}`);
      this.matcher = made.matcher;
    }
    this.deadline = setTimeout(() => this.finish("timeout"), this.spec.timeoutMs);
    this.poll = this.spec.port !== null || this.spec.http !== null ? setInterval(() => void this.check(), POLL_MS) : null;
    void this.check();
  }

  feed(source: Source, chunk: Uint8Array): void {
    if (this.done || this.matcher === null || this.matched !== null) return;
    let decoder = this.decoders.get(source);
    if (decoder === undefined) this.decoders.set(source, (decoder = new TextDecoder("utf-8")));
    const text = (this.partial.get(source) ?? "") + decoder.decode(chunk, { stream: true });
    const lines = text.split("\n");
    const rest = lines.pop() as string;
    this.partial.set(source, rest.length > MAX_LINE_CHARS ? rest.slice(0, MAX_LINE_CHARS) : rest);
    for (const line of lines) this.test(line);
    if (this.partialTimer !== null) clearTimeout(this.partialTimer);
    this.partialTimer = rest.length > 0 ? setTimeout(() => this.testPartials(), PARTIAL_IDLE_MS) : null;
  }

  dispose(): void {
    this.done = true;
    clearTimeout(this.deadline);
    if (this.poll !== null) clearInterval(this.poll);
    if (this.partialTimer !== null) clearTimeout(this.partialTimer);
    if (this.matcher?.kind === "sandbox") void this.matcher.dispose();
  }

  private testPartials(): void {
    this.partialTimer = null;
    for (const text of this.partial.values()) if (text.length > 0) this.test(text);
  }

  private test(rawLine: string): void {
    if (this.matched !== null || this.matcher === null) return;
    const line = stripEscapes(rawLine.length > MAX_LINE_CHARS ? rawLine.slice(0, MAX_LINE_CHARS) : rawLine).replace(/\r$/, "");
    if (this.matcher.kind === "inline") {
      const found = this.matcher.match(line, true);
      if (found !== null) this.onMatch(found.text, found.groups);
      return;
    }
    if (!this.matcher.mayMatch(line, true)) return;
    if (this.queue.length < MAX_QUEUED_LINES) this.queue.push(line);
    void this.drain();
  }

  /** The sandbox takes one batch at a time. */
  private async drain(): Promise<void> {
    if (this.matching || this.matcher?.kind !== "sandbox") return;
    this.matching = true;
    try {
      while (this.queue.length > 0 && this.matched === null && !this.done) {
        const batch = this.queue.splice(0, 64);
        const found = await this.matcher.match(batch, true);
        const first = found[0];
        if (first !== undefined) this.onMatch(first.match.text, first.match.groups);
      }
    } catch {
      // A sandbox that failed or overran leaves the pattern unmatched; the deadline reports the timeout.
    } finally {
      this.matching = false;
    }
  }

  private onMatch(text: string, groups: Readonly<Record<string, string | undefined>> | null): void {
    const captures = groups === null
      ? null
      : Object.fromEntries(Object.entries(groups).filter((entry): entry is [string, string] => entry[1] !== undefined));
    this.matched = { text, captures };
    void this.check();
  }

  private async check(): Promise<void> {
    if (this.done) return;
    if (this.spec.pattern !== null && this.matched === null) return;
    if (this.spec.port !== null && !this.portSeen) {
      const ports = await processTable().listening(await this.options.pids());
      if (this.done) return;
      this.portSeen = ports === null ? await acceptsConnections(this.spec.port) : ports.includes(this.spec.port);
      if (!this.portSeen || this.done) return;
    }
    if (this.spec.http !== null) {
      if (this.checkingHttp) return;
      this.checkingHttp = true;
      const answered = await httpAnswers(this.spec.http);
      this.checkingHttp = false;
      if (!answered) return;
    }
    this.finish("ready");
  }

  private finish(status: ReadyReport["status"]): void {
    if (this.done) return;
    this.options.report({
      status,
      elapsedMs: Math.max(0, Math.round(performance.now() - this.options.spawnedAt)),
      matched: this.matched?.text ?? null,
      captures: this.matched?.captures ?? null,
      port: this.spec.port !== null && this.portSeen ? this.spec.port : null,
    });
    this.dispose();
  }
}

/** Whether a GET of the URL gets an HTTP answer with a status below 500 (redirects are an answer too). */
async function httpAnswers(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(HTTP_ATTEMPT_MS) });
    await response.body?.cancel();
    return response.status < 500;
  } catch {
    return false;
  }
}
