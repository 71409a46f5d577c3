/**
 * How the monitor engine's lines get matched against the contract's patterns: one interface, two places a pattern
 * may run, chosen by the engine once per contract (architecture invariant 1, actors/match/matcher.ts).
 *   - Inline (inline-matching.ts): both patterns compiled with V8's linear-time engine run on the actor's thread,
 *     line by line as output is framed; nothing ever waits.
 *   - Sandboxed (sandbox-matching.ts): lines queue for the terminable regex-sandbox thread and go to it a batch at
 *     a time; output waits as bytes while the queue is full, the pipes are paused meanwhile, and an overflow fails
 *     the contract. Output is never skipped for matching.
 * Either way the contract sees its events in output order; the engine (actors/monitor/engine.ts) frames output, keeps the
 * tail and the idle windows, and does not know which of the two it drives.
 */
import type { LineSource } from "../../mailbox/monitor.ts";
import type { ContractEvent } from "./contract.ts";

export interface LineMatching {
  /** Output of `source` (null: its EOF), in arrival order: framed now, or once the lines waiting leave room. */
  admit(source: LineSource, bytes: Uint8Array | null): void;
  /** A framed line, or the unterminated line of an idle source (`partial`), to match. */
  line(source: LineSource, text: string, bytes: number, partial: boolean): void;
  /** A line over the matching bound: it fails the contract once every line before it has been matched. */
  lineLimit(source: LineSource): void;
  /** The idle window of `source` closed: its unterminated line is matched once the output before it is framed. */
  idle(source: LineSource): void;
  /**
   * Byte strings of which every line the patterns can match contains one, so that lines without any need not be
   * framed (quiet-lines.ts); undefined when every line must be framed.
   */
  quietLiterals(wantSuccess: boolean): Uint8Array[] | undefined;
  /** Frames what may be framed and sends what waits: the engine calls it at the end of each of its steps. */
  flush(): void;
  /** The contract decided: nothing still waiting can change that, so it goes. */
  discard(): void;
  /** Lines waiting for (or in) matching, and their bytes with those of output not framed yet. */
  pending(): { lines: number; bytes: number };
  /** Resolves once everything admitted has been matched, or the contract no longer looks at lines. */
  drained(): Promise<void>;
  /** Ends the sandbox thread, if there is one; whatever it still answers no longer counts. */
  dispose(): Promise<void>;
}

/** What a matching may do to the engine that drives it. */
export interface MatchingHost {
  /** Frames output of `source` now (null: its EOF); the lines come back through `line` and `lineLimit`. */
  frame(source: LineSource, bytes: Uint8Array | null): void;
  /** Passes the unterminated line of `source` to `line` as a partial one, if the contract still looks at it. */
  probe(source: LineSource): void;
  /** Folds one contract event in; events come in output order. */
  apply(event: ContractEvent): void;
  /** The contract still looks at lines: it has not decided, and the run did not end in a way that already stands. */
  evaluating(): boolean;
  /** A success match could still change something (contract.ts). */
  wantsSuccess(): boolean;
  /** Pause (true) or resume (false) both pipes. */
  onBackpressure(paused: boolean): void;
  /** A step of the matching's own (a batch came back) ended: the engine reports a decision it led to. */
  settled(): void;
}
