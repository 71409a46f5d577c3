/**
 * The monitor engine a job actor drives: raw output in, one `MonitorOutcome` out. Thin glue around three pure
 * pieces — the framer (bytes → records), the diagnostic tail and the contract state machine — plus the two things
 * that need a clock or a thread: the 150 ms idle window for unterminated lines (match mode) and the matching
 * queue in front of a regex sandbox.
 *
 * Linear-time patterns are matched inline, record by record, as each chunk is framed: nothing is ever pending.
 * Sandboxed patterns go through a queue drained one batch (≤ 64 lines) at a time; the queue pauses both pipes at a
 * soft watermark and fails the contract at its hard bound, so output is never skipped for matching.
 */
import type { LineSource, MonitorContract, MonitorOutcome } from "../mailbox/monitor.ts";
import {
  initialContract,
  settle,
  transition,
  wantsSuccess,
  type ContractEvent,
  type ContractState,
  type ProcessEnd,
  type RawMatch,
} from "./contract.ts";
import { createDiagnosticTail, DIAGNOSTIC_TAIL_DEFAULTS } from "./diagnostic-tail.ts";
import { createFramer, type FramedRecord } from "./framing.ts";
import { createMatcher, SANDBOX_BATCH_LINES, type Matcher, type SandboxMatcher, type SandboxOptions } from "./matcher.ts";

export type { ProcessEnd } from "./contract.ts";

export interface MonitorEngine {
  /** Raw bytes as they arrive; the engine frames them. */
  push(source: LineSource, chunk: Uint8Array): void;
  /** EOF on that pipe: its unterminated line becomes a complete record. */
  end(source: LineSource): void;
  /** The contract reached a terminal decision: the actor should stop the group. */
  readonly decided: boolean;
  /** Human detail of a matcher-side decision (line or queue limit, sandbox error), else null. */
  readonly detail: string | null;
  /** After the process ended: flush, await pending evaluation when the exit decides, and report. */
  finish(end: ProcessEnd): Promise<MonitorOutcome>;
  /** Records waiting for (or in) evaluation, and their bytes. */
  pending(): { lines: number; bytes: number };
  /** Ends the timers and the sandbox worker. */
  dispose(): Promise<void>;
}

export interface EngineHooks {
  /** Called once, when `decided` becomes true. */
  onDecided(): void;
  /** Pause (true) or resume (false) both pipes. */
  onBackpressure(paused: boolean): void;
}

export const ENGINE_LIMITS = {
  /** Physical matching line, excluding its terminator. */
  maxLineBytes: 64 * 1024,
  /** Match mode: an unterminated line idle this long on its source is evaluated. */
  idleMs: 150,
  /** Soft watermark: pause both pipes. */
  pauseLines: 1024,
  pauseBytes: 256 * 1024,
  /** Resume once evaluation has caught up to half the watermark, so the pipes do not flap. */
  resumeLines: 512,
  resumeBytes: 128 * 1024,
  /** Hard bound: over it the contract fails with matcher_queue_limit. */
  maxLines: 16_384,
  maxBytes: 4 * 1024 * 1024,
};

export interface EngineOptions {
  idleMs?: number;
  sandbox?: Partial<SandboxOptions>;
  /** Overrides of the queue watermarks and bounds (tests use small ones). */
  limits?: Partial<Omit<typeof ENGINE_LIMITS, "maxLineBytes" | "idleMs">>;
}

const LF = 0x0a;
const CR = 0x0d;
const SOURCES: readonly LineSource[] = ["stdout", "stderr"];

/** A record waiting for the sandbox: a complete line, an idle partial (probe), or an over-long line marker. */
type QueueItem = { source: LineSource; text: string; bytes: number; kind: "line" | "probe" | "limit" };

interface SourceState {
  /** Bytes of the unterminated line, tracked here so no chunk needs the partial decoded. */
  partialBytes: number;
  /** The current unterminated line already went over the bound and was reported. */
  limitReported: boolean;
  idle: ReturnType<typeof setTimeout> | null;
  ended: boolean;
}

/**
 * Index of the first record of `records` the diagnostic tail needs. The tail keeps its newest `maxLines` entries,
 * one per run of identical adjacent lines, so anything before the run that is `maxLines + 1` runs from the end is
 * evicted whatever it is. Pushing from the start of that run (itself evicted, which keeps `truncated` true) leaves
 * the tail exactly as pushing every record would, at a cost per chunk instead of per line.
 */
export function tailStart(records: readonly FramedRecord<LineSource>[]): number {
  const keepRuns = DIAGNOSTIC_TAIL_DEFAULTS.maxLines + 1;
  if (records.length <= keepRuns) return 0;
  let runs = 1;
  for (let i = records.length - 2; i >= 0; i--) {
    const older = records[i] as FramedRecord<LineSource>;
    const newer = records[i + 1] as FramedRecord<LineSource>;
    if (older.text !== newer.text || older.source !== newer.source) {
      runs++;
      if (runs > keepRuns) return i + 1;
    }
  }
  return 0;
}

export function createMonitorEngine(
  contract: MonitorContract,
  hooks: EngineHooks,
  options: EngineOptions = {},
): MonitorEngine {
  const limits = { ...ENGINE_LIMITS, ...options.limits };
  const idleMs = options.idleMs ?? ENGINE_LIMITS.idleMs;
  const framer = createFramer<LineSource>({ maxRecordBytes: ENGINE_LIMITS.maxLineBytes });
  const tail = createDiagnosticTail();
  const sources: Record<LineSource, SourceState> = {
    stdout: { partialBytes: 0, limitReported: false, idle: null, ended: false },
    stderr: { partialBytes: 0, limitReported: false, idle: null, ended: false },
  };

  let state: ContractState = initialContract(contract.completion);
  let detail: string | null = null;
  let notified = false;
  let paused = false;
  let finished = false;
  let outcome: Promise<MonitorOutcome> | null = null;

  // The sandbox queue: items[head, items.length) are pending; the first `inFlight` of them are with the sandbox.
  let items: QueueItem[] = [];
  let head = 0;
  let inFlight = 0;
  let pendingLines = 0;
  let pendingBytes = 0;
  let drained: (() => void)[] = [];

  const created = createMatcher(contract.resultPattern, contract.failurePattern, options.sandbox);
  const matcher: Matcher | null = created.ok ? created.matcher : null;
  const inline = matcher?.kind === "inline" ? matcher : null;
  const sandbox: SandboxMatcher | null = matcher?.kind === "sandbox" ? matcher : null;

  const apply = (event: ContractEvent): void => {
    const next = transition(state, event);
    if (next === state) return;
    state = next;
    if (next.phase === "decided") {
      if (next.decision.by === "limit") detail = next.decision.detail;
      // Nothing still queued can change a decision: drop it and let the pipes drain.
      clearQueue();
    }
  };

  /** Tells the actor about a decision; deferred to the end of the public call that made it. */
  const notify = (): void => {
    if (notified || state.phase !== "decided") return;
    notified = true;
    hooks.onDecided();
  };

  const setPaused = (value: boolean): void => {
    if (paused === value) return;
    paused = value;
    hooks.onBackpressure(value);
  };

  const clearQueue = (): void => {
    // Items in flight stay counted until their batch settles; the rest go.
    items = items.slice(head, head + inFlight);
    head = 0;
    pendingLines = inFlight;
    pendingBytes = 0;
    for (const item of items) pendingBytes += item.bytes;
    setPaused(false);
    if (inFlight === 0) wakeDrained();
  };

  const wakeDrained = (): void => {
    const waiting = drained;
    drained = [];
    for (const resolve of waiting) resolve();
  };

  const enqueue = (item: QueueItem): void => {
    // A line identical to the last one still waiting would get the identical verdict, and the contract only acts
    // on the first of them: keeping one is exactly equivalent and stops a flood of blank lines filling the queue.
    const last = items.length - 1 >= head + inFlight ? items[items.length - 1] : undefined;
    if (item.kind === "line" && last !== undefined && last.kind === "line" && last.source === item.source && last.text === item.text) {
      return;
    }
    items.push(item);
    pendingLines++;
    pendingBytes += item.bytes;
    if (pendingLines > limits.maxLines || pendingBytes > limits.maxBytes) {
      apply({ type: "queue_limit" });
      return;
    }
    if (pendingLines >= limits.pauseLines || pendingBytes >= limits.pauseBytes) setPaused(true);
  };

  /** Sends the next batch to the sandbox; limit markers at the front are decided in order, without it. */
  const pump = (): void => {
    if (sandbox === null || inFlight > 0) return;
    while (head < items.length && state.phase !== "decided") {
      const first = items[head] as QueueItem;
      if (first.kind !== "limit") break;
      head++;
      pendingLines--;
      apply({ type: "line_limit", source: first.source });
    }
    if (state.phase === "decided" || head >= items.length) {
      items = [];
      head = 0;
      if (state.phase !== "decided") afterProgress();
      wakeDrained();
      return;
    }
    const batch: QueueItem[] = [];
    for (let at = head; at < items.length && batch.length < SANDBOX_BATCH_LINES; at++) {
      const item = items[at] as QueueItem;
      if (item.kind === "limit") break;
      batch.push(item);
    }
    inFlight = batch.length;
    sandbox.match(batch.map((item) => item.text), wantsSuccess(state)).then(
      (matches) => settleBatch(batch, matches),
      (error: Error) => settleBatch(batch, null, error),
    );
  };

  const settleBatch = (batch: QueueItem[], matches: { index: number; match: RawMatch }[] | null, error?: Error): void => {
    // After the end, the sandbox is disposed and whatever it still said no longer counts.
    if (finished) return;
    head += batch.length;
    inFlight = 0;
    // Compact now and then rather than shifting the array for every batch.
    if (head >= items.length) {
      items = [];
      head = 0;
    } else if (head > 1024 && head * 2 > items.length) {
      items = items.slice(head);
      head = 0;
    }
    pendingLines -= batch.length;
    for (const item of batch) pendingBytes -= item.bytes;
    if (matches === null) {
      apply({ type: "matcher_error", message: error?.message ?? "the regex sandbox failed" });
    } else {
      for (const { index, match } of matches) {
        const item = batch[index];
        if (item === undefined) continue;
        apply({ type: "match", source: item.source, match, partial: item.kind === "probe" });
        if (state.phase === "decided") break;
      }
    }
    afterProgress();
    notify();
    pump();
  };

  const afterProgress = (): void => {
    if (paused && pendingLines <= limits.resumeLines && pendingBytes <= limits.resumeBytes) setPaused(false);
  };

  /** One complete (or probed) line through the contract, inline or via the queue. */
  const evaluate = (source: LineSource, text: string, bytes: number, kind: "line" | "probe"): void => {
    if (inline !== null) {
      const match = inline.match(text, wantsSuccess(state));
      if (match !== null) apply({ type: "match", source, match, partial: kind === "probe" });
    } else if (sandbox !== null && sandbox.mayMatch(text, wantsSuccess(state))) {
      // A line the prefilters rule out is decided here (no match) and never costs the sandbox a round trip.
      enqueue({ source, text, bytes, kind });
    }
  };

  const lineLimit = (source: LineSource): void => {
    if (sandbox !== null) enqueue({ source, text: "", bytes: 0, kind: "limit" });
    else apply({ type: "line_limit", source });
  };

  const consume = (records: FramedRecord<LineSource>[]): void => {
    const tailFrom = tailStart(records);
    for (let i = 0; i < records.length; i++) {
      const record = records[i] as FramedRecord<LineSource>;
      if (i >= tailFrom) tail.push(record.source, record.text);
      if (state.phase === "decided") continue;
      // Never match fragments of an over-long line: the line itself fails the contract.
      if (record.overLimit) lineLimit(record.source);
      else evaluate(record.source, record.text, record.bytes, "line");
    }
  };

  const onIdle = (source: LineSource): void => {
    const at = sources[source];
    at.idle = null;
    if (finished || at.ended || state.phase === "decided") return;
    const partial = framer.partial(source);
    // Probed, not consumed: the framer keeps the bytes, so the completed line is matched again as a whole.
    if (partial !== null && !partial.overLimit) evaluate(source, partial.text, partial.bytes, "probe");
    notify();
    pump();
  };

  /** Keeps the per-source partial length and idle window in step with a chunk just framed. */
  const trackPartial = (source: LineSource, chunk: Uint8Array): void => {
    const at = sources[source];
    const length = chunk.length;
    const lastByte = chunk[length - 1];
    if (lastByte === LF || lastByte === CR) {
      at.partialBytes = 0;
    } else {
      let terminator = chunk.lastIndexOf(LF);
      for (let cr = chunk.indexOf(CR, terminator + 1); cr >= 0; cr = chunk.indexOf(CR, cr + 1)) terminator = cr;
      at.partialBytes = terminator >= 0 ? length - 1 - terminator : at.partialBytes + length;
    }
    if (at.partialBytes === 0) {
      at.limitReported = false;
      if (at.idle !== null) {
        clearTimeout(at.idle);
        at.idle = null;
      }
      return;
    }
    if (state.phase === "decided") return;
    if (at.partialBytes > ENGINE_LIMITS.maxLineBytes) {
      // The line is already over the bound however it ends; a writer that never ends it must not stall the run.
      if (!at.limitReported) {
        at.limitReported = true;
        lineLimit(source);
      }
      return;
    }
    if (contract.completion !== "match") return;
    // Any bytes on this source restart its window; the other source has its own.
    if (at.idle !== null) at.idle.refresh();
    else at.idle = setTimeout(onIdle, idleMs, source);
  };

  const stopIdle = (at: SourceState): void => {
    if (at.idle !== null) clearTimeout(at.idle);
    at.idle = null;
  };

  const endSource = (source: LineSource): void => {
    const at = sources[source];
    if (at.ended) return;
    at.ended = true;
    at.partialBytes = 0;
    stopIdle(at);
    consume(framer.end(source));
  };

  const whenDrained = (): Promise<void> => {
    if (state.phase === "decided" || (inFlight === 0 && head >= items.length)) return Promise.resolve();
    return new Promise((resolve) => drained.push(resolve));
  };

  const disposeAll = async (): Promise<void> => {
    finished = true;
    for (const source of SOURCES) stopIdle(sources[source]);
    wakeDrained();
    await sandbox?.dispose();
  };

  if (!created.ok) {
    // The tool layer validates patterns first; one that still does not compile fails the run rather than the actor.
    apply({ type: "matcher_error", message: created.error });
    queueMicrotask(notify);
  }

  return {
    push(source, chunk) {
      if (finished || sources[source].ended || chunk.length === 0) return;
      consume(framer.push(source, chunk));
      trackPartial(source, chunk);
      notify();
      pump();
    },

    end(source) {
      if (finished) return;
      endSource(source);
      notify();
      pump();
    },

    get decided() {
      return state.phase === "decided";
    },

    get detail() {
      return detail;
    },

    finish(end) {
      outcome ??= (async () => {
        // Unterminated lines are complete records at the end of a run, and the tail keeps them whatever the cause.
        for (const source of SOURCES) endSource(source);
        pump();
        // Only a natural exit is decided by what the output says; every other cause already stands.
        if (end.cause === "exit" || (end.cause === "contract" && state.phase !== "decided")) await whenDrained();
        notify();
        const verdict = settle(state, end);
        const snapshot = tail.snapshot();
        await disposeAll();
        return { ...verdict, output: snapshot.lines, outputTruncated: snapshot.truncated };
      })();
      return outcome;
    },

    pending() {
      return { lines: pendingLines, bytes: pendingBytes };
    },

    dispose() {
      return disposeAll();
    },
  };
}
