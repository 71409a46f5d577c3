/**
 * Whether something accepts a TCP connection on localhost:port: what `ready.port` falls back to where the process table
 * cannot list the job's sockets (no `lsof` on the machine).
 */
import { connect } from "node:net";

export function acceptsConnections(port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1" });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}
