/**
 * The typed port checks messages against the protocol at the boundary when asked to, in both directions.
 */
import { MessageChannel } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { ProtocolError, typedPort } from "../../mailbox/port.ts";
import { protocolCheckers } from "../../mailbox/check.ts";
import type { ActorToHost, HostToActor } from "../../mailbox/protocol.ts";

const checkers = protocolCheckers();
const actorChecks = { outgoing: checkers.actorToHost, incoming: checkers.hostToActor };
const hostChecks = { outgoing: checkers.hostToActor, incoming: checkers.actorToHost };

describe("typed port", () => {
  it("delivers valid messages with their transferred buffers", async () => {
    const { port1, port2 } = new MessageChannel();
    const actor = typedPort<ActorToHost, HostToActor>(port1, actorChecks);
    const host = typedPort<HostToActor, ActorToHost>(port2, hostChecks);
    const received = new Promise<ActorToHost>((resolve) => host.receive(resolve));
    const payload = new TextEncoder().encode("hi\n");
    const spans = new Uint32Array([0, 3]);
    actor.send({ type: "output", seq: 0, payload, spans, bytes: 3, lines: 1 }, [payload.buffer, spans.buffer]);
    const message = await received;
    expect(message.type).toBe("output");
    if (message.type === "output") expect(new TextDecoder().decode(message.payload)).toBe("hi\n");
    expect(payload.byteLength).toBe(0); // transferred, not copied
    actor.close();
    host.close();
  });

  it("refuses to send a message that does not match the protocol, naming where", () => {
    const { port1, port2 } = new MessageChannel();
    const actor = typedPort<ActorToHost, HostToActor>(port1, actorChecks);
    const bad = { type: "output", seq: -1, payload: "text", spans: new Uint32Array(0), bytes: 0, lines: 0 } as unknown as ActorToHost;
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
