/**
 * A typed wrapper over a MessagePort. Types are checked at compile time; in development and tests every message
 * is also checked against its schema at the boundary, so a malformed message fails loudly where it crosses
 * instead of corrupting state on the other side (docs/decisions/mailbox-checks.md records why production skips the
 * check).
 */
import type { MessagePort, Transferable } from "node:worker_threads";
import type { Checker } from "./check.ts";

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

export function typedPort<Out, In>(
  port: MessagePort,
  /** Schema checks for each direction (mailbox/check.ts), or null where checks are off. */
  checks: { outgoing: Checker; incoming: Checker } | null,
): TypedPort<Out, In> {
  const checkOut = checks?.outgoing;
  const checkIn = checks?.incoming;
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
