/**
 * The TCP ports a job's processes listen on, from `/proc` (the /proc backend of table.ts): the listening sockets of `/proc/net/tcp` and `/proc/net/tcp6`
 * (state 0A) joined, by inode, with the sockets the job's processes hold open (`/proc/<pid>/fd/* -> socket:[inode]`).
 * Only the sockets of the given processes count, so another program's server on the same port is never reported as
 * the job's.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

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

/** Sorted, distinct ports the processes listen on; null where the socket tables cannot be read. */
export function listeningPorts(pids: readonly number[]): number[] | null {
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
