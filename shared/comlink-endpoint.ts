/**
 * comlink on Node MessagePorts, for the control plane of one actor (snapshot, write, resize, stop).
 * comlink's main entry is UMD, which Node loads as CommonJS and whose named exports it finds. A compiled actor thread
 * has comlink inside its bundle, so it compiles from the pool's shared code cache instead of being resolved, read and
 * compiled from node_modules by every new thread (scripts/build.ts).
 */
import type { MessagePort, TransferListItem } from "node:worker_threads";
import * as Comlink from "comlink";

export { Comlink };

type Listener = Parameters<Comlink.Endpoint["addEventListener"]>[1];

/**
 * The port as comlink's endpoint, through its Node-style `on`/`off`. comlink reads only `data` of the event it is
 * handed; a listener added with `addEventListener` would make Node build a `MessageEvent` for each message, and the
 * first one in a thread loads that class with Node's whole fetch implementation: 28–48 ms of CPU in a fresh thread.
 * Every actor paid it at its first control call, mostly its stop, so 64 jobs stopped together paid it 64 times at once
 * (docs/decisions/comlink.md). The port is closed by its owners
 * (host/runtime/actor-link.ts, actors/job/actor.ts), not by comlink.
 */
export function createNodeEndpoint(port: MessagePort): Comlink.Endpoint {
  const handlers = new Map<Listener, (data: unknown) => void>();
  return {
    postMessage: (message: unknown, transfer?: readonly unknown[]) => port.postMessage(message, transfer as TransferListItem[] | undefined),
    addEventListener(_type, listener) {
      const handler = (data: unknown) => {
        const event = { data } as MessageEvent;
        if (typeof listener === "function") listener(event);
        else listener.handleEvent(event);
      };
      handlers.set(listener, handler);
      port.on("message", handler);
    },
    removeEventListener(_type, listener) {
      const handler = handlers.get(listener);
      if (handler === undefined) return;
      handlers.delete(listener);
      port.off("message", handler);
    },
    start: () => port.start(),
  };
}
