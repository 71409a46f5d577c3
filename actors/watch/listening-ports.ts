/**
 * The TCP ports a job's processes listen on. On Linux: the listening sockets of `/proc/net/tcp` and `/proc/net/tcp6`
 * (state 0A) joined, by inode, with the sockets the job's processes hold open (`/proc/<pid>/fd/* -> socket:[inode]`).
 * Only the sockets of the given processes count, so another program's server on the same port is never reported as
 * the job's. Elsewhere there is no such table: callers fall back to a connect probe on a known port.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { connect } from "node:net";

/** Listening inode -> port, from the text of /proc/net/tcp or tcp6. Pure, for tests. */
export function parseListening(table: string, into = new Map<string, number>()): Map<string, number> {
  const lines = table.split("\n");
  for (let index = 1; index < lines.length; index++) {
    const fields = (lines[index] as string).trim().split(/\s+/);
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
    if (fields.length < 10 || fields[3] !== "0A") continue;
    const local = fields[1] as string;
    const port = Number.parseInt(local.slice(local.lastIndexOf(":") + 1), 16);
    const inode = fields[9] as string;
    if (Number.isInteger(port) && inode !== "0") into.set(inode, port);
  }
  return into;
}

function readListening(): Map<string, number> | null {
  const inodes = new Map<string, number>();
  let readAny = false;
  for (const path of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    try {
      parseListening(readFileSync(path, "latin1"), inodes);
      readAny = true;
    } catch {
      // tcp6 is absent where IPv6 is disabled.
    }
  }
  return readAny ? inodes : null;
}

/** Socket inodes one process holds open. */
function socketInodes(pid: number, into: Set<string>): void {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return;
  }
  for (const fd of fds) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue;
    }
    if (target.startsWith("socket:[")) into.add(target.slice(8, -1));
  }
}

/** Sorted, distinct ports the processes listen on; null where this cannot be read (not Linux, no /proc). */
export function listeningPorts(pids: readonly number[]): number[] | null {
  if (process.platform !== "linux") return null;
  const listening = readListening();
  if (listening === null) return null;
  if (listening.size === 0) return [];
  const held = new Set<string>();
  for (const pid of pids) socketInodes(pid, held);
  const ports = new Set<number>();
  for (const inode of held) {
    const port = listening.get(inode);
    if (port !== undefined) ports.add(port);
  }
  return [...ports].sort((a, b) => a - b);
}

/** Whether something accepts a TCP connection on localhost:port (the fallback where sockets cannot be listed). */
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
