/**
 * The process table this process uses, chosen once: `/proc` where it is mounted (Linux), the portable `ps` backend
 * otherwise (macOS) or when `PI_JOBS_PROCESS_TABLE=ps` forces it (to run Linux the way macOS runs). Every thread
 * chooses for itself, from the same environment and the same machine, so all choose alike.
 */
import { existsSync } from "node:fs";
import { processTableForced, type Env } from "../config.ts";
import { procTable } from "./proc-table.ts";
import { psTable } from "./ps-table.ts";
import type { ProcessTable, TableKind } from "./table.ts";
import type { PidWindow } from "./tags.ts";

/** Which backend `env` asks for on this machine. */
export function chooseTable(env: Env = process.env): TableKind {
  if (processTableForced(env)) return "ps";
  return process.platform === "linux" && existsSync("/proc/self/stat") ? "proc" : "ps";
}

let chosen: ProcessTable | undefined;

/** The process table, chosen at the first call. */
export function processTable(): ProcessTable {
  chosen ??= chooseTable() === "proc" ? procTable : psTable;
  return chosen;
}

export type { ProcessEntry, MemberSample, ProcessTable, TableKind, ThreadReading, TreeSampler } from "./table.ts";
export { runtimeOfTag, signalTagged, TAG_VARIABLE, type PidWindow, type TaggedProcess, type TagScan } from "./tags.ts";

/** The processes carrying `tag` now; null where the table cannot read environments. */
export async function taggedProcesses(tag: string, window?: PidWindow): Promise<number[] | null> {
  return (await processTable().scanTag(tag, window))?.tagged ?? null;
}
