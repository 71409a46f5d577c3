/**
 * Sandboxed matching (line-matching.ts): patterns V8's linear-time engine cannot take run only in the regex sandbox
 * (actors/match/sandbox-matcher.ts, actors/match/regex-sandbox.ts), a thread that owns nothing and is terminated when
 * a batch overruns its deadline,
 * so no pattern can hold the actor's process, PTY or timers hostage (architecture invariant 1).
 *
 * Lines the prefilters cannot rule out wait in a queue (match-queue.ts) and go to the sandbox one batch (≤ 64
 * lines) at a time. Raw chunks wait in a backlog (output-backlog.ts) and are framed a slice at a time while the
 * queue is under its watermark, so a chunk of thousands of short lines (or the burst Node delivers when a process
 * exits, paused pipes or not) waits as bytes instead of overflowing the queue's line bound. While anything waits,
 * both pipes are paused, and going over the hard bound fails the contract: output is never skipped for matching.
 */
import type { LineSource } from "../../mailbox/monitor.ts";
import type { LineMatching, MatchingHost } from "./line-matching.ts";
import { SANDBOX_BATCH_LINES, type IndexedMatch, type SandboxMatcher } from "../match/sandbox-matcher.ts";
import { createMatchQueue, type QueuedLine, type QueueLimits } from "./match-queue.ts";
import { createOutputBacklog } from "./output-backlog.ts";

/** Bytes are framed in slices of this size, so the queue can stop taking lines mid-chunk. */
const FRAME_SLICE_BYTES = 8 * 1024;

export function createSandboxMatching(sandbox: SandboxMatcher, host: MatchingHost, limits: QueueLimits): LineMatching {
  const backlog = createOutputBacklog();
  const queue = createMatchQueue(limits);
  /** Sources whose idle window closed while their bytes still waited in the backlog: probed once it is framed. */
  const probeDue: Record<LineSource, boolean> = { stdout: false, stderr: false };
  let paused = false;
  let disposed = false;
  let waiters: (() => void)[] = [];

  const setPaused = (value: boolean): void => {
    if (paused === value) return;
    paused = value;
    host.onBackpressure(value);
  };

  const updatePause = (): void => {
    if (!host.evaluating()) return setPaused(false);
    if (!backlog.empty || queue.full()) setPaused(true);
    else if (queue.caughtUp()) setPaused(false);
  };

  const checkDrained = (): void => {
    if (host.evaluating() && !(backlog.empty && queue.empty)) return;
    const waiting = waiters;
    waiters = [];
    for (const resolve of waiting) resolve();
  };

  const failOverBound = (): void => {
    if (host.evaluating() && queue.overBound(backlog.bytes)) host.apply({ type: "queue_limit" });
  };

  /** Sends the next batch to the sandbox; limit markers at the front are decided in order, without it. */
  const pump = (): void => {
    if (queue.inFlight) return;
    while (host.evaluating()) {
      const source = queue.takeLimit();
      if (source === null) break;
      host.apply({ type: "line_limit", source });
    }
    if (!host.evaluating()) return queue.discard();
    const batch = queue.takeBatch(SANDBOX_BATCH_LINES);
    if (batch.length === 0) return;
    sandbox.match(batch.map((item) => item.text), host.wantsSuccess()).then(
      (matches) => settle(batch, matches, null),
      (error: Error) => settle(batch, null, error),
    );
  };

  const settle = (batch: readonly QueuedLine[], matches: IndexedMatch[] | null, error: Error | null): void => {
    // After the end the sandbox is disposed, and whatever it still says no longer counts.
    if (disposed) return;
    queue.settle();
    if (matches === null) {
      host.apply({ type: "matcher_error", message: error?.message ?? "the regex sandbox failed" });
    } else {
      for (const { index, match } of matches) {
        const item = batch[index];
        if (item === undefined) continue;
        host.apply({ type: "match", source: item.source, match, partial: item.kind === "probe" });
        if (!host.evaluating()) break;
      }
    }
    flush();
    host.settled();
  };

  /** Frames what waits in the backlog, a slice at a time while the queue has room. */
  const flush = (): void => {
    for (;;) {
      const evaluating = host.evaluating();
      if (evaluating && queue.full()) break;
      const piece = backlog.take(evaluating ? FRAME_SLICE_BYTES : Number.POSITIVE_INFINITY);
      if (piece === undefined) break;
      host.frame(piece.source, piece.bytes);
    }
    if (backlog.empty) {
      // Idle windows that closed while their bytes were still waiting are probed now that they are framed.
      for (const source of ["stdout", "stderr"] as const) {
        if (!probeDue[source]) continue;
        probeDue[source] = false;
        host.probe(source);
      }
    }
    // The batch first: a limit marker at the front of the queue may decide, and a decision releases the pipes.
    pump();
    updatePause();
    checkDrained();
  };

  return {
    admit(source, bytes) {
      // New bytes restart the idle window (the engine re-arms it); an EOF ends it.
      probeDue[source] = false;
      backlog.push(source, bytes);
      if (bytes !== null) failOverBound();
    },

    line(source, text, bytes, partial) {
      // A line the prefilters rule out is decided here (no match) and never costs the sandbox a round trip.
      if (!sandbox.mayMatch(text, host.wantsSuccess())) return;
      queue.add({ kind: partial ? "probe" : "line", source, text, bytes });
      failOverBound();
    },

    lineLimit(source) {
      queue.add({ kind: "limit", source });
      failOverBound();
    },

    idle(source) {
      if (backlog.empty) host.probe(source);
      else probeDue[source] = true;
    },

    // Every line is framed while the contract looks at lines: the queue paces the framing, not the prefilters.
    quietLiterals: () => undefined,

    flush,

    discard() {
      queue.discard();
      probeDue.stdout = false;
      probeDue.stderr = false;
    },

    pending: () => ({ lines: queue.lines, bytes: queue.bytes + backlog.bytes }),

    drained() {
      return new Promise((resolve) => {
        waiters.push(resolve);
        checkDrained();
      });
    },

    async dispose() {
      disposed = true;
      const waiting = waiters;
      waiters = [];
      for (const resolve of waiting) resolve();
      await sandbox.dispose();
    },
  };
}
