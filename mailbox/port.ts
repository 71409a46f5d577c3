/**
 * A typed wrapper over a MessagePort. Types are checked at compile time; in development and tests every message
 * is also checked against its schema at the boundary, so a malformed message fails loudly where it crosses
 * instead of corrupting state on the other side (docs/decisions.md records why production skips the check).
 */
import type { MessagePort, Transferable } from "node:worker_threads";
import type { TSchema } from "typebox";
import { Compile } from "typebox/compile";

export interface TypedPort<Out, In> {
  send(message: Out, transfer?: readonly Transferable[]): void;
  /**
   * Registers the one receiver of incoming messages. A message that fails the check goes to `onInvalid` when given
   * (the host must never throw on Pi's thread because of a job), else it throws where it crossed.
   */
  receive(handler: (message: In) => void, onInvalid?: (error: ProtocolError) => void): void;
  close(): void;
}

export class ProtocolError extends Error {
  constructor(direction: "outgoing" | "incoming", detail: string) {
    super(`pi-jobs mailbox: ${direction} message does not match the protocol: ${detail}`);
    this.name = "ProtocolError";
  }
}

type Checker = (value: unknown) => string | null;

const checkers = new WeakMap<TSchema, Checker>();

function checkerFor(schema: TSchema): Checker {
  let checker = checkers.get(schema);
  if (!checker) {
    const compiled = Compile(schema);
    checker = (value) => {
      if (compiled.Check(value)) return null;
      const first = compiled.Errors(value)[0];
      return first ? `${first.instancePath || "/"} ${first.message}` : "invalid";
    };
    checkers.set(schema, checker);
  }
  return checker;
}

export function typedPort<Out, In>(
  port: MessagePort,
  options: { outgoing: TSchema; incoming: TSchema; check: boolean },
): TypedPort<Out, In> {
  const checkOut = options.check ? checkerFor(options.outgoing) : null;
  const checkIn = options.check ? checkerFor(options.incoming) : null;
  return {
    send(message, transfer) {
      const problem = checkOut?.(message);
      if (problem) throw new ProtocolError("outgoing", problem);
      port.postMessage(message, transfer as Transferable[] | undefined);
    },
    receive(handler, onInvalid) {
      port.on("message", (message: unknown) => {
        const problem = checkIn?.(message);
        if (problem) {
          const error = new ProtocolError("incoming", problem);
          if (!onInvalid) throw error;
          onInvalid(error);
          return;
        }
        handler(message as In);
      });
    },
    close() {
      port.close();
    },
  };
}
