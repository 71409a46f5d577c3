/**
 * The typed port checks messages against the protocol at the boundary when asked to, in both directions.
 */
import { MessageChannel } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { ProtocolError, typedPort } from "../../mailbox/port.ts";
import { protocolCheckers } from "../../mailbox/check.ts";
import type { ActorToHost, HostToActor } from "../../mailbox/messages.ts";

const checkers = protocolCheckers();
const actorChecks = { outgoing: checkers.actorToHost, incoming: checkers.hostToActor };
const hostChecks = { outgoing: checkers.hostToActor, incoming: checkers.actorToHost };

describe("typed port", () => {
  it("delivers valid messages", async () => {
    const { port1, port2 } = new MessageChannel();
    const actor = typedPort<ActorToHost, HostToActor>(port1, actorChecks);
    const host = typedPort<HostToActor, ActorToHost>(port2, hostChecks);
    const received = new Promise<ActorToHost>((resolve) => host.receive(resolve));
    actor.send({ type: "unread", id: 3, taken: { text: "hi\n", bytes: 3, omittedBytes: 0 } });
    const message = await received;
    expect(message.type).toBe("unread");
    if (message.type === "unread") expect(message.taken.text).toBe("hi\n");
    actor.close();
    host.close();
  });

  it("refuses to send a message that does not match the protocol, naming where", () => {
    const { port1, port2 } = new MessageChannel();
    const actor = typedPort<ActorToHost, HostToActor>(port1, actorChecks);
    const bad = { type: "unread", id: -1, taken: "text" } as unknown as ActorToHost;
    expect(() => actor.send(bad)).toThrow(ProtocolError);
    port1.close();
    port2.close();
  });

  it("skips the check when told to (production)", () => {
    const { port1, port2 } = new MessageChannel();
    const actor = typedPort<ActorToHost, HostToActor>(port1, null);
    const bad = { type: "nonsense" } as unknown as ActorToHost;
    expect(() => actor.send(bad)).not.toThrow();
    port1.close();
    port2.close();
  });
});

describe("typed port, receiving side", () => {
  it("hands an invalid incoming message to onInvalid instead of throwing on the receiving thread", async () => {
    const { port1, port2 } = new MessageChannel();
    const host = typedPort<HostToActor, ActorToHost>(port2, hostChecks);
    const invalid = new Promise<ProtocolError>((resolve) => host.receive(() => {}, resolve));
    port1.postMessage({ type: "exit", result: { cause: "nonsense" } });
    const error = await invalid;
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toMatch(/incoming message does not match the protocol/);
    port1.close();
    host.close();
  });
});
