/**
 * The control plane's endpoint (shared/comlink-endpoint.ts) with a real thread: comlink calls go both ways, and the
 * thread answering them never builds a MessageEvent, whose first use loads Node's fetch implementation into the thread
 * (28–48 ms of CPU each, paid by every actor at its first control call before).
 */
import { MessageChannel, Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { Comlink, createNodeEndpoint } from "../../shared/comlink-endpoint.ts";
import type { ControlEndpointApi } from "../fixtures/control-endpoint-thread.ts";

const workers: Worker[] = [];
afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.terminate();
});

describe("the control plane's endpoint", () => {
  it("carries comlink calls without a MessageEvent: the answering thread never loads Node's fetch implementation", async () => {
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(new URL("../fixtures/control-endpoint-thread.ts", import.meta.url), {
      workerData: { port: port2 },
      transferList: [port2],
    });
    workers.push(worker);
    const remote = Comlink.wrap<ControlEndpointApi>(createNodeEndpoint(port1));
    expect(await remote.add(2, 3)).toBe(5);
    expect(await remote.add(40, 2)).toBe(42);
    const modules = await remote.loadedModules();
    expect(modules.length).toBeGreaterThan(10);
    expect(modules.filter((name) => /undici/.test(name))).toEqual([]);
    // Released, the proxy sends nothing more, and the port can be closed by its owner.
    remote[Comlink.releaseProxy]();
    port1.close();
  });
});
