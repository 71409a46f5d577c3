/**
 * The host's two ports to one job actor: reads on the data port (the retained window, the ports, the unread output)
 * and calls on the control port (comlink), each waiting for its answer as long as the actor lives. An answer is given
 * up on only when the actor is hung (host/runtime/heartbeat.ts) or the job ends first; a read is then answered from
 * the exit message instead, so nothing taken is lost. Apart from the job's handle (host/runtime/job.ts), which owns
 * the job's state and tells this link when the job ended.
 */
import type { MessagePort } from "node:worker_threads";
import type { Remote } from "comlink";
import type { ProtocolCheckers } from "../../mailbox/check.ts";
import type { ActorControl, StopSignal } from "../../mailbox/control.ts";
import { actorHung, endedBeforeAnswer } from "../../mailbox/errors.ts";
import type { ActorToHost, HostToActor } from "../../mailbox/messages.ts";
import type { RetainedWindow, TakenOutput } from "../../mailbox/output.ts";
import { typedPort, type ProtocolError, type TypedPort } from "../../mailbox/port.ts";
import { Comlink, createNodeEndpoint } from "../../shared/comlink-endpoint.ts";
import type { Heartbeat } from "./heartbeat.ts";

/** How long a control call still waiting when the job ends may take to get its answer (see close). */
const CONTROL_ANSWER_GRACE_MS = 2_000;

export type ReadRequest = { what: "window" } | { what: "ports" } | { what: "unread"; raw: boolean; final: boolean };
type ReadReply = Extract<ActorToHost, { type: "window" | "ports" | "unread" }>;

type PendingRead =
  | { what: "window"; resolve(window: RetainedWindow): void }
  | { what: "ports"; resolve(ports: number[] | null): void }
  | { what: "unread"; raw: boolean; resolve(taken: TakenOutput): void };

/** What the job's end leaves for the reads the actor did not answer: its exit message's final output. */
export interface FinalOutput {
  window: RetainedWindow;
  /** Takes the final unread output, raw or folded (once; later takes get nothing). */
  takeUnread(raw: boolean): TakenOutput;
}

export class ActorLink {
  private readonly dataPort: MessagePort;
  private readonly controlPort: MessagePort;
  private readonly mailbox: TypedPort<HostToActor, ActorToHost>;
  private readonly control: Remote<ActorControl>;
  private readonly heartbeat: Heartbeat;
  private readonly reads = new Map<number, PendingRead>();
  private nextReadId = 0;
  /** Calls and reads in flight, told when the job ends before the actor answered them. */
  private readonly endWaiters = new Set<() => void>();

  constructor(options: {
    data: MessagePort;
    control: MessagePort;
    /** Schema checks for the data port (mailbox/check.ts), or null where checks are off. */
    checks: ProtocolCheckers | null;
    heartbeat: Heartbeat;
    receive(message: ActorToHost): void;
    /** A message that failed its check: Pi's thread must not throw because of a job. */
    invalid(error: ProtocolError): void;
  }) {
    this.dataPort = options.data;
    this.controlPort = options.control;
    this.heartbeat = options.heartbeat;
    const { checks } = options;
    this.mailbox = typedPort<HostToActor, ActorToHost>(options.data, checks && { outgoing: checks.hostToActor, incoming: checks.actorToHost });
    this.mailbox.receive(options.receive, options.invalid);
    this.control = Comlink.wrap<ActorControl>(createNodeEndpoint(options.control));
  }

  read<T extends RetainedWindow | TakenOutput | number[] | null>(request: ReadRequest): Promise<T> {
    const id = this.nextReadId++;
    const reply = new Promise<T>((resolve) => {
      // An unread read remembers its form: if the job ends first, its answer comes from the exit record.
      const pending = request.what === "unread" ? { what: "unread", raw: request.raw, resolve } : { what: request.what, resolve };
      this.reads.set(id, pending as PendingRead);
    });
    this.mailbox.send({ type: "read", id, ...request });
    return this.answered(reply).finally(() => this.reads.delete(id));
  }

  /** A read's reply from the actor. */
  replied(message: ReadReply): void {
    const pending = this.reads.get(message.id);
    this.reads.delete(message.id);
    if (pending?.what === "window" && message.type === "window") pending.resolve(message.window);
    else if (pending?.what === "ports" && message.type === "ports") pending.resolve(message.ports);
    else if (pending?.what === "unread" && message.type === "unread") pending.resolve(message.taken);
  }

  /** A control call, answered as long as the actor lives. */
  call<T>(fn: (control: Remote<ActorControl>) => Promise<T>): Promise<T> {
    return this.answered(fn(this.control));
  }

  /** Asks the actor to stop; the job's end is its answer (a stop is confirmed by the exit, never by the call). */
  stop(signal: StopSignal): void {
    this.control.stop(signal).catch(() => {});
  }

  /**
   * Waits for an answer from the actor as long as the actor runs: rejects only when the job ends first (a read is
   * then answered from the exit message instead, see answerFromExit) or the actor is hung (host/runtime/heartbeat.ts). A starved
   * actor, however long its heartbeat stands still, and one still waiting for a thread are waited for.
   */
  private answered<T>(answer: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let looking = false;
      const watch = setInterval(() => {
        if (looking) return;
        looking = true;
        void this.heartbeat.look().then((verdict) => {
          looking = false;
          if (verdict.kind === "hung") finish(() => reject(new Error(actorHung(verdict.evidence))));
        });
      }, 500);
      watch.unref();
      let finished = false;
      const finish = (then: () => void) => {
        if (finished) return;
        finished = true;
        clearInterval(watch);
        then();
      };
      answer.then(
        (value) => finish(() => resolve(value)),
        (error: unknown) => finish(() => reject(error)),
      );
      const onEnd = () => finish(() => reject(new Error(endedBeforeAnswer())));
      this.endWaiters.add(onEnd);
      const forget = () => this.endWaiters.delete(onEnd);
      answer.then(forget, forget);
    });
  }

  /** The job ended: reads the actor did not answer before its exit are answered from its final output. */
  answerFromExit(final: FinalOutput): void {
    // Nothing taken is lost: the exit message carries what a read would have.
    for (const pending of this.reads.values()) {
      if (pending.what === "window") pending.resolve(final.window);
      else if (pending.what === "ports") pending.resolve([]);
      else pending.resolve(final.takeUnread(pending.raw));
    }
  }

  /** The job ended and its reads are answered: both ports close, the control port after a grace for calls in flight. */
  close(): void {
    this.reads.clear();
    this.dataPort.close();
    // A control call's answer travels on the control port and the exit on the data port, which are not ordered with
    // each other: an `end_stdin` that made `cat` exit can see the exit first. So calls still waiting get a moment for
    // their answer before they are told the job ended, and the control port stays open that long.
    const waiting = [...this.endWaiters];
    this.endWaiters.clear();
    const closeControl = () => {
      for (const onEnd of waiting) onEnd();
      this.control[Comlink.releaseProxy]();
      this.controlPort.close();
    };
    if (waiting.length === 0) closeControl();
    else setTimeout(closeControl, CONTROL_ANSWER_GRACE_MS).unref();
  }
}
