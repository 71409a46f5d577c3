/**
 * The monitor engine a job actor drives: raw output in, one `MonitorOutcome` out. Thin glue around three pure
 * pieces — the framer (bytes → records), the diagnostic tail and the contract state machine — plus the two things
 * that need a clock or a thread: the 150 ms idle window for unterminated lines (match mode) and the matching
 * queue in front of a regex sandbox.
 *
 * Linear-time patterns are matched inline, record by record, as each chunk is framed: nothing is ever pending.
 * Sandboxed patterns go through a queue drained one batch (≤ 64 lines) at a time. Raw chunks wait in a backlog and
 * are framed a slice at a time while the queue is under its watermark; while anything waits, both pipes are
 * paused, and going over the hard bound fails the contract: output is never skipped for matching.
 *
 * Most chunks of a flood hold nothing a contract can act on. When every pattern the contract still runs needs a
 * literal and a chunk's lines do not contain one, only the lines the diagnostic tail can still keep are framed
 * (`quietLines`, quiet-lines.ts): the others could not match, are proved to be within the line bound, and would be evicted from
 * the tail anyway. Once the contract has decided, lines only feed the tail, and any chunk is framed that way. The
 * outcome is the same as framing every line.
 *
 * With a redactor (the job's `redact` flag), secrets never reach the outcome: each match the contract looks at is
 * redacted whole before it is bounded, and the tail once, when the outcome is built (monitor-redaction.ts).
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
} from "./contract.ts";
import { createDiagnosticTail } from "./diagnostic-tail.ts";
import { createFramer, type FramedRecord } from "./framing.ts";
import { redactMatch, redactTail } from "./monitor-redaction.ts";
import { literalBytes, quietLines, tailStart } from "./quiet-lines.ts";
import type { Redactor } from "./redact.ts";
import {
  createMatcher,
  requiredPrefix,
  SANDBOX_BATCH_LINES,
  type IndexedMatch,
  type InlineMatcher,
  type SandboxMatcher,
  type SandboxOptions,
} from "./matcher.ts";

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
  /** Replaces secrets in the outcome: in each match before the contract bounds it, and in the tail at the end. */
  redactor?: Redactor | null;
}

const LF = 0x0a;
const CR = 0x0d;
const SOURCES: readonly LineSource[] = ["stdout", "stderr"];

/** Sandbox path: bytes are framed in slices of this size, so the queue can stop taking lines mid-chunk. */
const FRAME_SLICE_BYTES = 8 * 1024;

/** A record waiting for the sandbox: a complete line, an idle partial (probe), or an over-long line marker. */
type QueueItem = { source: LineSource; text: string; bytes: number; kind: "line" | "probe" | "limit" };

/** Raw output not framed yet (sandbox path); `bytes` null is the source's EOF, kept in order. */
type BacklogPiece = { source: LineSource; bytes: Uint8Array | null; offset: number };

interface SourceState {
  /** `end()` was called (or `finish` ended it): later bytes are ignored. */
  closed: boolean;
  /** The framer has seen the EOF. */
  ended: boolean;
  /** Bytes of the unterminated line, tracked here so no chunk needs the partial decoded. */
  partialBytes: number;
  /** The current unterminated line already went over the bound and was reported. */
  limitReported: boolean;
  idle: ReturnType<typeof setTimeout> | null;
  /** The idle window closed while this source's bytes still waited in the backlog. */
  probeDue: boolean;
}

export function createMonitorEngine(
  contract: MonitorContract,
  hooks: EngineHooks,
  options: EngineOptions = {},
): MonitorEngine {
  const limits = { ...ENGINE_LIMITS, ...options.limits };
  const idleMs = options.idleMs ?? ENGINE_LIMITS.idleMs;
  const redactor = options.redactor ?? null;
  const framer = createFramer<LineSource>({ maxRecordBytes: ENGINE_LIMITS.maxLineBytes });
  const tail = createDiagnosticTail();
  const sources: Record<LineSource, SourceState> = {
    stdout: { closed: false, ended: false, partialBytes: 0, limitReported: false, idle: null, probeDue: false },
    stderr: { closed: false, ended: false, partialBytes: 0, limitReported: false, idle: null, probeDue: false },
  };

  let state: ContractState = initialContract(contract.completion);
  let detail: string | null = null;
  let notified = false;
  let paused = false;
  /** Set by `finish` for causes that already stand: remaining output only feeds the tail. */
  let tailOnly = false;
  let finished = false;
  let outcome: Promise<MonitorOutcome> | null = null;

  // Sandbox path only. Raw chunks wait in `backlog` and are framed a slice at a time while the matching queue is
  // under its watermark, so a chunk of thousands of short lines (or the burst Node delivers when a process exits,
  // paused pipes or not) waits as bytes instead of overflowing the queue's line bound.
  let backlog: BacklogPiece[] = [];
  let backlogHead = 0;
  let backlogBytes = 0;
  // The matching queue: items[head, items.length) are pending; the first `inFlight` of them are with the sandbox.
  let items: QueueItem[] = [];
  let head = 0;
  let inFlight = 0;
  let pendingLines = 0;
  let pendingBytes = 0;
  let drained: (() => void)[] = [];

  const created = createMatcher(contract.resultPattern, contract.failurePattern, options.sandbox);
  const inline: InlineMatcher | null = created.ok && created.matcher.kind === "inline" ? created.matcher : null;
  const sandbox: SandboxMatcher | null = created.ok && created.matcher.kind === "sandbox" ? created.matcher : null;

  const evaluating = (): boolean => state.phase !== "decided" && !tailOnly;

  // Inline patterns only: while it evaluates, the sandbox path frames every line, in slices paced by its queue.
  const requiredBytes = (pattern: string): Uint8Array | null => literalBytes(requiredPrefix(pattern)?.literal ?? null);
  const resultBytes = inline === null ? null : requiredBytes(contract.resultPattern);
  const failureBytes = inline === null || contract.failurePattern === null ? null : requiredBytes(contract.failurePattern);

  /** What `quietLines` must rule out for the patterns the contract still runs; undefined when it cannot. */
  const quietLiterals = (): Uint8Array[] | null | undefined => {
    if (!evaluating()) return null;
    if (inline === null) return undefined;
    const literals: Uint8Array[] = [];
    if (contract.failurePattern !== null) {
      if (failureBytes === null) return undefined;
      literals.push(failureBytes);
    }
    if (wantsSuccess(state)) {
      if (resultBytes === null) return undefined;
      literals.push(resultBytes);
    }
    return literals;
  };

  const apply = (event: ContractEvent): void => {
    // Only the few matches the contract still looks at are redacted, whole, before any bound cuts them.
    if (event.type === "match" && redactor !== null && state.phase === "watching") {
      event = { ...event, match: redactMatch(redactor, event.match) };
    }
    const next = transition(state, event);
    if (next === state) return;
    state = next;
    if (next.phase === "decided") {
      if (next.decision.by === "limit") detail = next.decision.detail;
      // Nothing still queued can change a decision: drop it, and let the pipes drain into the tail.
      dropQueue();
      for (const source of SOURCES) stopIdle(sources[source]);
    }
  };

  /** Tells the actor about a decision, at the end of the public call (or callback) that made it. */
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

  const backlogEmpty = (): boolean => backlogHead >= backlog.length;

  const updatePause = (): void => {
    if (sandbox === null) return;
    if (!evaluating()) return setPaused(false);
    if (!backlogEmpty() || pendingLines >= limits.pauseLines || pendingBytes >= limits.pauseBytes) setPaused(true);
    else if (pendingLines <= limits.resumeLines && pendingBytes <= limits.resumeBytes) setPaused(false);
  };

  const checkDrained = (): void => {
    if (state.phase !== "decided" && !(backlogEmpty() && inFlight === 0 && head >= items.length)) return;
    const waiting = drained;
    drained = [];
    for (const resolve of waiting) resolve();
  };

  const dropQueue = (): void => {
    // Items in flight stay counted until their batch settles; the rest go.
    items = items.slice(head, head + inFlight);
    head = 0;
    pendingLines = inFlight;
    pendingBytes = 0;
    for (const item of items) pendingBytes += item.bytes;
  };

  const overBound = (): boolean => pendingLines > limits.maxLines || pendingBytes + backlogBytes > limits.maxBytes;

  const enqueue = (item: QueueItem): void => {
    // A line identical to the last one still waiting would get the identical verdict, and the contract only acts
    // on the first of them: keeping one is exactly equivalent and stops a flood of blank lines filling the queue.
    const last = items.length > head + inFlight ? items[items.length - 1] : undefined;
    if (item.kind === "line" && last !== undefined && last.kind === "line" && last.source === item.source && last.text === item.text) {
      return;
    }
    items.push(item);
    pendingLines++;
    pendingBytes += item.bytes;
    if (overBound()) apply({ type: "queue_limit" });
  };

  /** Sends the next batch to the sandbox; limit markers at the front are decided in order, without it. */
  const pump = (): void => {
    if (sandbox === null || inFlight > 0) return;
    while (head < items.length && evaluating()) {
      const first = items[head] as QueueItem;
      if (first.kind !== "limit") break;
      head++;
      pendingLines--;
      apply({ type: "line_limit", source: first.source });
    }
    if (!evaluating() || head >= items.length) {
      items = [];
      head = 0;
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
      (matches) => settleBatch(batch, matches, null),
      (error: Error) => settleBatch(batch, null, error),
    );
  };

  const settleBatch = (batch: QueueItem[], matches: IndexedMatch[] | null, error: Error | null): void => {
    // After the end the sandbox is disposed, and whatever it still says no longer counts.
    if (finished) return;
    head += batch.length;
    inFlight = 0;
    pendingLines -= batch.length;
    for (const item of batch) pendingBytes -= item.bytes;
    // Compact now and then rather than shifting the array for every batch.
    if (head >= items.length) {
      items = [];
      head = 0;
    } else if (head > 1024 && head * 2 > items.length) {
      items = items.slice(head);
      head = 0;
    }
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
    ingest();
    notify();
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
    // Queued like a line so that whatever came before it is decided first.
    if (sandbox !== null) enqueue({ source, text: "", bytes: 0, kind: "limit" });
    else apply({ type: "line_limit", source });
  };

  const consume = (records: FramedRecord<LineSource>[]): void => {
    const tailFrom = tailStart(records);
    for (let i = 0; i < records.length; i++) {
      const record = records[i] as FramedRecord<LineSource>;
      if (i >= tailFrom) tail.push(record.source, record.text);
      if (!evaluating()) continue;
      // Never match fragments of an over-long line: the line itself fails the contract.
      if (record.overLimit) lineLimit(record.source);
      else evaluate(record.source, record.text, record.bytes, "line");
    }
  };

  /** Frames bytes of one source and keeps its partial-line length in step, without decoding the partial. */
  const frame = (source: LineSource, chunk: Uint8Array): void => {
    const literals = quietLiterals();
    const quiet = literals === undefined ? null : quietLines(chunk, literals, ENGINE_LIMITS.maxLineBytes);
    if (quiet === null) {
      consume(framer.push(source, chunk));
    } else {
      // The quiet lines are whole lines after a LF: the framer is between lines on both sides of them.
      consume(framer.push(source, chunk.subarray(0, quiet.from)));
      consume(framer.push(source, chunk.subarray(quiet.to)));
    }
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
    if (at.partialBytes === 0) at.limitReported = false;
    else if (at.partialBytes > ENGINE_LIMITS.maxLineBytes && !at.limitReported && evaluating()) {
      // The line is over the bound however it ends; a writer that never ends it must not stall the run.
      at.limitReported = true;
      lineLimit(source);
    }
  };

  const endSource = (source: LineSource): void => {
    const at = sources[source];
    if (at.ended) return;
    at.ended = true;
    at.partialBytes = 0;
    consume(framer.end(source));
  };

  /** Frames what waits in the backlog, a slice at a time while the matching queue has room. */
  const ingest = (): void => {
    while (!backlogEmpty()) {
      const limited = evaluating();
      if (limited && (pendingLines >= limits.pauseLines || pendingBytes >= limits.pauseBytes)) break;
      const piece = backlog[backlogHead] as BacklogPiece;
      if (piece.bytes === null) {
        backlogHead++;
        endSource(piece.source);
        continue;
      }
      const end = limited ? Math.min(piece.bytes.length, piece.offset + FRAME_SLICE_BYTES) : piece.bytes.length;
      const slice = piece.bytes.subarray(piece.offset, end);
      piece.offset = end;
      if (end === piece.bytes.length) backlogHead++;
      backlogBytes -= slice.length;
      frame(piece.source, slice);
    }
    if (backlogEmpty()) {
      backlog = [];
      backlogHead = 0;
      // Idle windows that closed while their bytes were still waiting here are probed now that they are framed.
      for (const source of SOURCES) {
        if (sources[source].probeDue) probe(source);
      }
    } else if (backlogHead > 64 && backlogHead * 2 > backlog.length) {
      backlog = backlog.slice(backlogHead);
      backlogHead = 0;
    }
    // The batch first: a limit marker at the front of the queue may decide, and a decision releases the pipes.
    pump();
    updatePause();
    checkDrained();
  };

  const probe = (source: LineSource): void => {
    const at = sources[source];
    at.probeDue = false;
    if (at.ended || !evaluating()) return;
    const partial = framer.partial(source);
    // Probed, not consumed: the framer keeps the bytes, so the completed line is matched again as a whole.
    if (partial !== null && !partial.overLimit) evaluate(source, partial.text, partial.bytes, "probe");
  };

  const onIdle = (source: LineSource): void => {
    sources[source].idle = null;
    if (finished || !evaluating()) return;
    if (!backlogEmpty()) {
      sources[source].probeDue = true;
      return;
    }
    probe(source);
    ingest();
    notify();
  };

  /** Match mode: bytes arriving on a source restart its idle window; the other source has its own. */
  const armIdle = (source: LineSource, chunk: Uint8Array): void => {
    if (contract.completion !== "match" || !evaluating()) return;
    const at = sources[source];
    at.probeDue = false;
    const lastByte = chunk[chunk.length - 1];
    if (lastByte === LF || lastByte === CR) stopIdle(at);
    else if (at.idle !== null) at.idle.refresh();
    else at.idle = setTimeout(onIdle, idleMs, source);
  };

  const stopIdle = (at: SourceState): void => {
    if (at.idle !== null) clearTimeout(at.idle);
    at.idle = null;
    at.probeDue = false;
  };

  const close = (source: LineSource): void => {
    const at = sources[source];
    if (at.closed) return;
    at.closed = true;
    stopIdle(at);
    if (sandbox === null) endSource(source);
    else backlog.push({ source, bytes: null, offset: 0 });
  };

  const whenDrained = (): Promise<void> =>
    new Promise((resolve) => {
      drained.push(resolve);
      checkDrained();
    });

  const disposeAll = async (): Promise<void> => {
    finished = true;
    for (const source of SOURCES) stopIdle(sources[source]);
    const waiting = drained;
    drained = [];
    for (const resolve of waiting) resolve();
    await sandbox?.dispose();
  };

  if (!created.ok) {
    // The tool layer validates patterns first; one that still does not compile fails the run rather than the actor.
    apply({ type: "matcher_error", message: created.error });
    queueMicrotask(notify);
  }

  return {
    push(source, chunk) {
      if (finished || sources[source].closed || chunk.length === 0) return;
      armIdle(source, chunk);
      if (sandbox === null) {
        frame(source, chunk);
      } else {
        backlog.push({ source, bytes: chunk, offset: 0 });
        backlogBytes += chunk.length;
        if (evaluating() && overBound()) apply({ type: "queue_limit" });
        ingest();
      }
      notify();
    },

    end(source) {
      if (finished) return;
      close(source);
      ingest();
      notify();
    },

    get decided() {
      return state.phase === "decided";
    },

    get detail() {
      return detail;
    },

    finish(end) {
      outcome ??= (async () => {
        // Only a natural exit is decided by what the output says; every other cause already stands, and what
        // is left of the output only feeds the tail.
        const decidesByOutput = end.cause === "exit" || (end.cause === "contract" && state.phase !== "decided");
        if (!decidesByOutput) tailOnly = true;
        // Unterminated lines are complete records at the end of a run, and the tail keeps them whatever the cause.
        for (const source of SOURCES) close(source);
        ingest();
        if (decidesByOutput) await whenDrained();
        notify();
        const verdict = settle(state, end);
        const snapshot = tail.snapshot();
        await disposeAll();
        if (redactor === null) return { ...verdict, output: snapshot.lines, outputTruncated: snapshot.truncated };
        const output = redactTail(redactor, snapshot.lines);
        const redactions = (verdict.redactions ?? 0) + output.count;
        const outcome: MonitorOutcome = { ...verdict, output: output.lines, outputTruncated: snapshot.truncated };
        if (redactions > 0) outcome.redactions = redactions;
        return outcome;
      })();
      return outcome;
    },

    pending() {
      return { lines: pendingLines, bytes: pendingBytes + backlogBytes };
    },

    dispose() {
      return disposeAll();
    },
  };
}
