/**
 * A job actor's output path. Every chunk the process prints goes to the log, the shared cell's figures, the contract
 * engine (a monitor), the retained window, the unread head and tail (a shell job) and the watches; the host's reads
 * are answered from what is kept here, with secrets replaced. Apart from the actor's lifecycle (actors/job/actor.ts)
 * because none of it decides when the job starts or ends: it asks the actor to stop when the output says so (a full
 * log, a contract decision, a stuck monitor). Only what must see every byte, the contract matcher, may pause the
 * process's output; Pi's thread never does.
 */
import type { JobCellWriter } from "../../mailbox/cell.ts";
import type { StopSignal } from "../../mailbox/control.ts";
import type { ActorToHost, HostToActor, Read } from "../../mailbox/messages.ts";
import type { RetainedWindow, TakenOutput } from "../../mailbox/output.ts";
import type { TypedPort } from "../../mailbox/port.ts";
import type { EndCause, LimitTrip } from "../../mailbox/result.ts";
import type { JobSpec } from "../../mailbox/spec.ts";
import type { MonitorEngine } from "../monitor/engine.ts";
import type { Evidence } from "../../mailbox/evidence.ts";
import type { MonitorOutcome } from "../../mailbox/monitor.ts";
import { shownTailLines } from "../../shared/report-tail.ts";
import { EvidenceScan } from "../output/evidence-scan.ts";
import { countNewlines } from "../output/framing.ts";
import { openLogWriter, type LogWriter } from "../output/log-writer.ts";
import { modelReads, type ReadForm } from "../output/model-read.ts";
import { createOutputText, type OutputText } from "../output/read-text.ts";
import { createOutputWindow, type OutputWindow } from "../output/window.ts";
import { redactEvidence, redactWindow } from "../redact/output.ts";
import { createRedactor, type Redactor } from "../redact/redactor.ts";
import { threadEnv } from "../thread/env.ts";
import { JobWatch } from "../watch/watches.ts";
import type { Child } from "./state.ts";

/** The log of a job that never claimed its spawn: no file, nothing written. */
const NO_LOG: LogWriter = {
  path: "",
  write: () => ({ accepted: 0, hitQuota: false }),
  state: () => ({ path: null, bytes: 0, truncated: false, error: null }),
  close: () => {},
};

/** The redactor of the thread's own environment, made by the first job that needs it: every job without an env shares it. */
let threadRedactor: Redactor | null = null;

/** A redactor holds no state of its own: one made from the same environment serves every job that runs with it. */
function redactorFor(env: JobSpec["env"]): Redactor {
  return env === null ? (threadRedactor ??= createRedactor(threadEnv)) : createRedactor(env);
}

/** What the output path needs of its actor. */
export interface OutputOwner {
  readonly spec: JobSpec;
  readonly cell: JobCellWriter;
  readonly mailbox: TypedPort<ActorToHost, HostToActor>;
  /** The process, once spawned. */
  child(): Child | null;
  /** The exit message is sent: nothing more may be posted. */
  exitSent(): boolean;
  requestStop(cause: EndCause, signal: StopSignal): void;
  /** The tree passed one of the job's limits: stop the job for it. */
  limitPassed(trip: LimitTrip): void;
}

export class JobOutput {
  private readonly owner: OutputOwner;
  private readonly window: OutputWindow;
  /** A shell job's unread output as the model will read it; made in prepare(), since a terminal loads its emulator. */
  private unread: OutputText | null = null;
  /** Reads of `unread` as the model gets them: secrets replaced, folded (actors/output/model-read.ts). */
  private takeUnread: ((final: boolean, form: ReadForm) => TakenOutput) | null = null;
  /** Replaces secrets in everything this actor sends of its output; null when redaction is off. */
  private redactor: Redactor | null = null;
  /** Opened once the spawn is claimed: a job cancelled before it started leaves no file behind. */
  log: LogWriter = NO_LOG;
  engine: MonitorEngine | null = null;
  /** Stall, prompt and readiness watches, from the spawn to the end. */
  watch: JobWatch | null = null;
  readonly totals = { bytes: 0, lines: 0 };
  /** The error-like lines of the whole run, with the lines that belong to each. */
  private readonly evidence = new EvidenceScan();
  private matcherBehind = false;
  private paused = false;
  private logReported = false;

  constructor(owner: OutputOwner) {
    this.owner = owner;
    this.window = createOutputWindow(owner.spec.retain);
  }

  /** Makes what the job's kind needs before its spawn: the unread reader (a shell job), the contract engine (a monitor). */
  async prepare(): Promise<void> {
    const { spec } = this.owner;
    // The child gets `env`, or this thread's copy of the host's environment: its secrets are those values.
    const redactor = (this.redactor = spec.redact ? redactorFor(spec.env) : null);
    if (spec.unread) {
      this.unread = await createOutputText(spec.io, spec.unread);
      this.takeUnread = modelReads(this.unread, redactor);
    }
    if (spec.contract) {
      // Loaded only for monitors, so a shell job's thread starts without the matcher.
      const { createMonitorEngine } = await import("../monitor/engine.ts");
      this.engine = createMonitorEngine(spec.contract, {
        // A decision reached only from the last lines after the process ended on its own did not stop anything.
        onDecided: () => {
          if (!this.owner.child()?.exit) this.owner.requestStop("contract", "SIGTERM");
        },
        onBackpressure: (paused: boolean) => {
          this.matcherBehind = paused;
          this.applyPause();
        },
      }, { redactor });
    }
  }

  openLog(budget: SharedArrayBuffer): void {
    const { spec } = this.owner;
    this.log = openLogWriter({ dir: spec.log.dir, name: spec.id, maxBytes: spec.log.maxBytes, budget });
  }

  /** Starts the watches on the process that was just spawned. */
  watchFrom(pid: number, spawnedAt: number, spawnedAtEpoch: number): void {
    const { spec, cell, mailbox } = this.owner;
    // A persisted job's follower watches the job's tree, not its own (mailbox/spec.ts, WatchSpec.tree).
    const tree = spec.watch?.tree ?? { tag: spec.tag, pid, spawnedAtEpoch };
    this.watch = new JobWatch({
      spec: spec.watch,
      tag: tree.tag,
      pid: tree.pid,
      spawnedAt,
      spawnedAtEpoch: tree.spawnedAtEpoch,
      cell,
      notice: (kind, detail) => (kind === "runaway" ? this.onRunaway(detail) : this.onStuck(kind, detail)),
      ready: (report) => mailbox.send({ type: "ready", report }),
      limitPassed: (trip) => this.owner.limitPassed(trip),
    });
  }

  feed(source: "stdout" | "stderr" | "pty", chunk: Uint8Array): void {
    const { cell } = this.owner;
    const lines = countNewlines(chunk);
    this.totals.bytes += chunk.length;
    this.totals.lines += lines;
    const written = this.log.write(chunk);
    const log = this.log.state();
    cell.setLog(log.bytes, log.truncated);
    cell.addOutput(chunk.length, lines, Date.now());
    if ((written.hitQuota || written.accepted < chunk.length) && !this.logReported) this.onLogLimit();
    if (this.engine && source !== "pty") this.engine.push(source, chunk);
    this.window.feed(source, chunk, lines);
    const seen = this.evidence.log.count;
    this.evidence.feed(source, chunk, lines);
    if (this.evidence.log.count !== seen) cell.setEvidence(this.evidence.log.count);
    if (this.unread) {
      this.unread.feed(source, chunk);
      cell.setUnread(this.unread.pendingBytes);
    }
    this.watch?.feed(source, chunk);
  }

  /** A read from the host: answered at once from what the actor keeps; the bytes never crossed before. */
  answer(read: Read): void {
    const { cell, mailbox } = this.owner;
    if (this.owner.exitSent()) return;
    if (read.what === "window") {
      mailbox.send({ type: "window", id: read.id, window: this.readWindow() });
      return;
    }
    if (read.what === "ports") {
      const ports = this.watch && !this.owner.child()?.exit ? this.watch.listening() : Promise.resolve([]);
      void ports.then(
        (found) => {
          if (!this.owner.exitSent()) mailbox.send({ type: "ports", id: read.id, ports: found });
        },
        () => {
          if (!this.owner.exitSent()) mailbox.send({ type: "ports", id: read.id, ports: null });
        },
      );
      return;
    }
    const taken = this.takeUnread ? this.takeUnread(read.final, read.raw ? "raw" : "folded") : { text: "", bytes: 0, omittedBytes: 0 };
    cell.setUnread(this.unread?.pendingBytes ?? 0);
    mailbox.send({ type: "unread", id: read.id, taken });
  }

  /** The terminal's new size, for the emulator that renders a PTY's unread output. */
  resize(cols: number, rows: number): void {
    this.unread?.resize(cols, rows);
  }

  /**
   * The run's evidence, once its output has ended. A monitor that did not pass shows its last lines in its report
   * (shared/report-tail.ts): the evidence leaves those out. Secrets are replaced in it as in every other text the job sends.
   */
  finalEvidence(monitor: MonitorOutcome | null): Evidence {
    this.evidence.finish();
    this.owner.cell.setEvidence(this.evidence.log.count);
    const tailLines = monitor === null || monitor.status === "success" ? 0 : shownTailLines(monitor.output, monitor.matched);
    const evidence = this.evidence.log.snapshot(tailLines === 0 ? Number.POSITIVE_INFINITY : this.evidence.lineCount - tailLines + 1);
    return this.redactor === null ? evidence : redactEvidence(this.redactor, evidence);
  }

  /** What the exit message carries: the final window and the rest of the unread output, both with secrets replaced. */
  finalReads(): { window: RetainedWindow; unread: TakenOutput | null } {
    return { window: this.readWindow(), unread: this.takeUnread ? this.takeUnread(true, "both") : null };
  }

  /**
   * Lets the process's output flow again, for a job that must be able to drain what it already wrote: one being
   * stopped (`publish`: the cell says so at once) or one whose process exited (the cell is cleared when it ends).
   */
  unpause(publish: boolean): void {
    const io = this.owner.child()?.io;
    if (!this.paused || !io) return;
    this.paused = false;
    if (publish) this.owner.cell.setPaused(false);
    io.resume();
  }

  /** The retained window as the console may draw it: with secrets replaced. */
  private readWindow(): RetainedWindow {
    const window = this.window.read();
    return this.redactor ? redactWindow(this.redactor, window) : window;
  }

  /** A stall or prompt episode began: the host is told once. */
  private onStuck(kind: "stalled" | "waiting_for_input", detail: string | null): void {
    if (this.owner.exitSent()) return;
    this.owner.mailbox.send({ type: "notice", kind, detail });
    // A monitor cannot be answered (it has no stdin) and nobody reads it while it runs: with a stall time it ends
    // here, its tail kept, rather than sit until its timeout.
    if (this.engine && this.owner.spec.watch?.stallMs != null) this.owner.requestStop(kind, "SIGTERM");
  }

  /** A runaway episode began: the host hears of it once (the cell's flag says while it lasts); nothing is stopped. */
  private onRunaway(reason: string | null): void {
    if (this.owner.exitSent()) return;
    this.owner.mailbox.send({ type: "notice", kind: "runaway", detail: reason });
  }

  /** The log stopped taking bytes: a quota was reached or the disk failed. Reported once, never silent. */
  private onLogLimit(): void {
    this.logReported = true;
    const state = this.log.state();
    this.owner.mailbox.send({ type: "notice", kind: "log_truncated", detail: state.error });
    if (this.owner.spec.log.onQuota === "stop") this.owner.requestStop(state.truncated ? "log_quota" : "log_failed", "SIGTERM");
  }

  /**
   * Only what must see every byte may slow the process: the contract matcher (the log is written synchronously).
   * Pi's thread never does: output nobody reads stays here, bounded, and never waits for the host.
   */
  private applyPause(): void {
    const child = this.owner.child();
    // After the process exited, only its last buffered output is left to read: never pause that (see the actor's run()).
    const shouldPause = this.matcherBehind && !child?.exit;
    if (shouldPause === this.paused || !child) return;
    this.paused = shouldPause;
    this.owner.cell.setPaused(shouldPause);
    if (shouldPause) child.io.pause();
    else child.io.resume();
    this.owner.mailbox.send({ type: "notice", kind: shouldPause ? "paused" : "resumed", detail: shouldPause ? "matcher" : null });
  }
}
