/**
 * comlink on Node MessagePorts, for the control plane of one actor (snapshot, write, resize, stop).
 * comlink's package has no exports map and its main entry is UMD, which Node loads as CommonJS; a Node
 * MessagePort is already an EventTarget with start(), which is all comlink needs of an endpoint.
 */
import { createRequire } from "node:module";
import type { MessagePort } from "node:worker_threads";
import type * as ComlinkModule from "comlink";

export const Comlink = createRequire(import.meta.url)("comlink") as typeof ComlinkModule;

export function createNodeEndpoint(port: MessagePort): ComlinkModule.Endpoint {
  return port as unknown as ComlinkModule.Endpoint;
}
