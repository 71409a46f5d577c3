/**
 * The monitor engine a job actor drives: raw output in, one `MonitorOutcome` out. Thin glue around the pure pieces
 * — the framer (bytes → records), the diagnostic tail (its lines as a person reads them: colours, cursor codes and
 * `\r` progress removed) and the contract state machine — plus the 150 ms idle window
 * for unterminated lines (match mode) and the line matching, inline or in the regex sandbox (line-matching.ts),
 * which decides when output is framed and when each line's verdict reaches the contract.
 *
 * Most chunks of a flood hold nothing a contract can act on. When the matching names literals every line it can
 * match contains and a chunk's lines do not contain one, only the lines the diagnostic tail can still keep are
 * framed (`quietLines`, quiet-lines.ts): the others could not match, are proved to be within the line bound, and
 * would be evicted from the tail anyway. Once the contract has decided, lines only feed the tail, and any chunk is
 * framed that way. The outcome is the same as framing every line.
 *
 * With a redactor (the job's `redact` flag), secrets never reach the outcome: each match the contract looks at is
 * redacted whole before it is bounded, and the tail once, when the outcome is built (actors/redact/monitor.ts).
 */
import type { LineSource, MonitorContract, MonitorOutcome } from "../../mailbox/monitor.ts";
import { initialContract, settle, transition, wantsSuccess, type ContractEvent, type ContractState, type ProcessEnd } from "./contract.ts";
import { createDiagnosticTail } from "./diagnostic-tail.ts";
import { createFramer, type FramedRecord } from "../output/framing.ts";
import { createInlineMatching } from "./inline-matching.ts";
import type { LineMatching, MatchingHost } from "./line-matching.ts";
import { createSandboxMatching } from "./sandbox-matching.ts";
import { createMatcher } from "../match/matcher.ts";
import type { SandboxOptions } from "../match/sandbox-matcher.ts";
import { QUEUE_LIMITS, type QueueLimits } from "./match-queue.ts";
import { redactMatch, redactTail } from "../redact/monitor.ts";
import { quietLines, tailStart } from "./quiet-lines.ts";
import { plainLine } from "../output/pipe-text.ts";
import type { Redactor } from "../redact/redactor.ts";

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
  /** The watermarks and the hard bound of the lines waiting for the regex sandbox (match-queue.ts). */
  ...QUEUE_LIMITS,
};

export interface EngineOptions {
  idleMs?: number;
  sandbox?: Partial<SandboxOptions>;
  /** Overrides of the queue watermarks and bounds (tests use small ones). */
  limits?: Partial<QueueLimits>;
  /** Replaces secrets in the outcome: in each match before the contract bounds it, and in the tail at the end. */
  redactor?: Redactor | null;
}

const LF = 0x0a;
const CR = 0x0d;
const SOURCES: readonly LineSource[] = ["stdout", "stderr"];

interface SourceState {
  /** `end()` was called (or `finish` ended it): later bytes are ignored. */
  closed: boolean;
  /** The framer has seen the EOF. */
  ended: boolean;
  /** The current unterminated line already went over the bound and was reported. */
  limitReported: boolean;
  idle: ReturnType<typeof setTimeout> | null;
}

export function createMonitorEngine(
  contract: MonitorContract,
  hooks: EngineHooks,
  options: EngineOptions = {},
): MonitorEngine {
  const idleMs = options.idleMs ?? ENGINE_LIMITS.idleMs;
  const redactor = options.redactor ?? null;
  const framer = createFramer<LineSource>({ maxRecordBytes: ENGINE_LIMITS.maxLineBytes });
  const tail = createDiagnosticTail();
  const sources: Record<LineSource, SourceState> = {
    stdout: { closed: false, ended: false, limitReported: false, idle: null },
    stderr: { closed: false, ended: false, limitReported: false, idle: null },
  };

  let state: ContractState = initialContract(contract.completion);
  let detail: string | null = null;
  let notified = false;
  /** Set by `finish` for causes that already stand: remaining output only feeds the tail. */
  let tailOnly = false;
  let finished = false;
  let outcome: Promise<MonitorOutcome> | null = null;

  const evaluating = (): boolean => state.phase !== "decided" && !tailOnly;

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
      // Nothing still waiting can change a decision: drop it, and let the pipes drain into the tail.
      matching.discard();
      for (const source of SOURCES) stopIdle(sources[source]);
    }
  };

  /** Tells the actor about a decision, at the end of the public call (or callback) that made it. */
  const notify = (): void => {
    if (notified || state.phase !== "decided") return;
    notified = true;
    hooks.onDecided();
  };

  const consume = (records: FramedRecord<LineSource>[]): void => {
    const tailFrom = tailStart(records);
    for (let i = 0; i < records.length; i++) {
      const record = records[i] as FramedRecord<LineSource>;
      if (i >= tailFrom) tail.push(record.source, plainLine(record.text));
      if (!evaluating()) continue;
      // Never match fragments of an over-long line: the line itself fails the contract.
      if (record.overLimit) matching.lineLimit(record.source);
      else matching.line(record.source, record.text, record.bytes, false);
    }
  };

  /** Frames bytes of one source, skipping the lines no pattern can match that the tail would not keep. */
  const frame = (source: LineSource, chunk: Uint8Array): void => {
    const literals = evaluating() ? matching.quietLiterals(wantsSuccess(state)) : null;
    const quiet = literals === undefined ? null : quietLines(chunk, literals, ENGINE_LIMITS.maxLineBytes);
    if (quiet === null) {
      consume(framer.push(source, chunk));
    } else {
      // The quiet lines are whole lines after a LF: the framer is between lines on both sides of them.
      consume(framer.push(source, chunk.subarray(0, quiet.from)));
      consume(framer.push(source, chunk.subarray(quiet.to)));
    }
    const at = sources[source];
    const partialBytes = framer.partialBytes(source);
    if (partialBytes === 0) at.limitReported = false;
    else if (partialBytes > ENGINE_LIMITS.maxLineBytes && !at.limitReported && evaluating()) {
      // The line is over the bound however it ends; a writer that never ends it must not stall the run.
      at.limitReported = true;
      matching.lineLimit(source);
    }
  };

  const endSource = (source: LineSource): void => {
    const at = sources[source];
    if (at.ended) return;
    at.ended = true;
    consume(framer.end(source));
  };

  const probe = (source: LineSource): void => {
    if (sources[source].ended || !evaluating()) return;
    const partial = framer.partial(source);
    // Probed, not consumed: the framer keeps the bytes, so the completed line is matched again as a whole.
    if (partial !== null && !partial.overLimit) matching.line(source, partial.text, partial.bytes, true);
  };

  const onIdle = (source: LineSource): void => {
    sources[source].idle = null;
    if (finished || !evaluating()) return;
    matching.idle(source);
    matching.flush();
    notify();
  };

  /** Match mode: bytes arriving on a source restart its idle window; the other source has its own. */
  const armIdle = (source: LineSource, chunk: Uint8Array): void => {
    if (contract.completion !== "match" || !evaluating()) return;
    const at = sources[source];
    const lastByte = chunk[chunk.length - 1];
    if (lastByte === LF || lastByte === CR) stopIdle(at);
    else if (at.idle !== null) at.idle.refresh();
    else at.idle = setTimeout(onIdle, idleMs, source);
  };

  const stopIdle = (at: SourceState): void => {
    if (at.idle !== null) clearTimeout(at.idle);
    at.idle = null;
  };

  const close = (source: LineSource): void => {
    const at = sources[source];
    if (at.closed) return;
    at.closed = true;
    stopIdle(at);
    matching.admit(source, null);
  };

  const disposeAll = async (): Promise<void> => {
    finished = true;
    for (const source of SOURCES) stopIdle(sources[source]);
    await matching.dispose();
  };

  const host: MatchingHost = {
    frame: (source, bytes) => (bytes === null ? endSource(source) : frame(source, bytes)),
    probe,
    apply,
    evaluating,
    wantsSuccess: () => wantsSuccess(state),
    onBackpressure: (paused) => hooks.onBackpressure(paused),
    settled: notify,
  };
  const created = createMatcher(contract.resultPattern, contract.failurePattern, options.sandbox);
  // A contract whose patterns do not compile is decided below, before its matcher could be asked anything.
  const matcher = created.ok ? created.matcher : { kind: "inline" as const, match: () => null };
  // Chosen once per contract: inline when both patterns compiled into V8's linear engine, else the sandbox.
  const matching: LineMatching =
    matcher.kind === "inline"
      ? createInlineMatching(matcher, contract, host)
      : createSandboxMatching(matcher, host, { ...QUEUE_LIMITS, ...options.limits });

  if (!created.ok) {
    // The tool layer validates patterns first; one that still does not compile fails the run rather than the actor.
    apply({ type: "matcher_error", message: created.error });
    queueMicrotask(notify);
  }

  return {
    push(source, chunk) {
      if (finished || sources[source].closed || chunk.length === 0) return;
      armIdle(source, chunk);
      matching.admit(source, chunk);
      matching.flush();
      notify();
    },

    end(source) {
      if (finished) return;
      close(source);
      matching.flush();
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
        matching.flush();
        if (decidesByOutput) await matching.drained();
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
      return matching.pending();
    },

    dispose() {
      return disposeAll();
    },
  };
}
