/**
 * The job actor's answers on its control port (mailbox/control.ts): input, the end of stdin, a terminal's size and a
 * stop, at human rate. Apart from the actor's start and exit path because each is only a check of the actor's state
 * and the process's wiring, then one call on the process; a refused call answers with its reason (mailbox/errors.ts).
 */
import type { ActorControl, StopSignal, WriteAck } from "../../mailbox/control.ts";
import { MAX_WRITE_QUEUE_BYTES } from "../../mailbox/constants.ts";
import {
  endStdinOnTerminal,
  noStdin,
  notRunning,
  resizeNeedsTerminal,
  stdinAlreadyClosed,
  terminalClosed,
  writeQueueFull,
} from "../../mailbox/errors.ts";
import type { EndCause } from "../../mailbox/result.ts";
import type { JobSpec } from "../../mailbox/spec.ts";
import type { ActorState } from "./state.ts";

/** What the control calls need of the actor. */
export interface ControlTarget {
  readonly spec: JobSpec;
  state(): ActorState;
  /** Resizes the emulator that renders a PTY's unread output, with the terminal. */
  resizeOutput(cols: number, rows: number): void;
  requestStop(cause: EndCause, signal: StopSignal): void;
}

export function jobControl(actor: ControlTarget): ActorControl {
  /** Only a running process takes input: before its spawn, and once it is being stopped, there is none to give it. */
  const running = () => {
    const state = actor.state();
    return state.phase === "running" ? state.child.io : null;
  };
  return {
    write(bytes: Uint8Array): WriteAck {
      const io = running();
      if (!io) return { ok: false, error: notRunning() };
      const pending = io.pendingWriteBytes();
      if (pending + bytes.length > MAX_WRITE_QUEUE_BYTES) return { ok: false, error: writeQueueFull(pending, MAX_WRITE_QUEUE_BYTES) };
      if (io.kind === "pipes" && actor.spec.io.kind === "pipes" && !actor.spec.io.stdin) return { ok: false, error: noStdin() };
      return { ok: true, queuedBytes: io.write(bytes) };
    },

    endStdin(): WriteAck {
      const io = running();
      if (!io) return { ok: false, error: notRunning() };
      if (io.kind === "pty") return { ok: false, error: endStdinOnTerminal() };
      return io.endStdin() ? { ok: true, queuedBytes: 0 } : { ok: false, error: stdinAlreadyClosed() };
    },

    resize(cols: number, rows: number): WriteAck {
      const io = running();
      if (!io) return { ok: false, error: notRunning() };
      if (io.kind !== "pty") return { ok: false, error: resizeNeedsTerminal() };
      if (!io.resize(cols, rows)) return { ok: false, error: terminalClosed() };
      actor.resizeOutput(cols, rows);
      return { ok: true, queuedBytes: 0 };
    },

    stop(signal: StopSignal): void {
      actor.requestStop("stopped", signal);
    },
  };
}
