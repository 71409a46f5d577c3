/**
 * The control port: the human-rate calls one actor answers (write, end stdin, resize, stop), proxied by comlink.
 * Never used for output. A refused call answers with a reason (mailbox/errors.ts), never with an exception.
 */
import { Type, type Static } from "typebox";

export const WriteAck = Type.Union([
  Type.Object({ ok: Type.Literal(true), queuedBytes: Type.Integer({ minimum: 0 }) }, { additionalProperties: false }),
  Type.Object({ ok: Type.Literal(false), error: Type.String() }, { additionalProperties: false }),
]);
export type WriteAck = Static<typeof WriteAck>;

export const StopSignal = Type.Union([
  Type.Literal("SIGTERM"),
  Type.Literal("SIGKILL"),
  Type.Literal("SIGINT"),
  Type.Literal("SIGHUP"),
  Type.Literal("SIGQUIT"),
]);
export type StopSignal = Static<typeof StopSignal>;

/** The calls one actor answers on its control port. */
export interface ActorControl {
  /** Queue bytes for stdin (pipes) or the terminal (PTY); refused over the 1 MiB outstanding bound. */
  write(bytes: Uint8Array): WriteAck;
  /** Close stdin (pipes only). */
  endStdin(): WriteAck;
  resize(cols: number, rows: number): WriteAck;
  /** Ask the actor to stop the group (signal first, SIGKILL after the grace); resolves once it is asked, not done. */
  stop(signal: StopSignal): void;
}
