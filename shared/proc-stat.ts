/**
 * `/proc/<pid>/stat` (Linux): one read, split into fields. The command name (field 2) may hold spaces and
 * parentheses, so the fields are counted after its last ')': index 0 is field 3 (the state), index N is field N + 3.
 */
import { readFileSync } from "node:fs";

/** Clock ticks per second of `/proc` times: USER_HZ, 100 on every Linux architecture Node runs on. */
export const TICKS_PER_SECOND = 100;

/** The fields after the command name, or null when the process is gone or unreadable. */
export function statFields(pid: number | string): string[] | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return null;
  }
  const close = stat.lastIndexOf(")");
  return close < 0 ? null : stat.slice(close + 2).split(" ");
}
