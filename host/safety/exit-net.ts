/**
 * The last line of defence when Pi exits without a shutdown: a synchronous handler on the process's `exit` event that
 * SIGKILLs every live job's process group and every process carrying one of the runtime's tags. Pi answers a dead
 * terminal with an emergency exit that skips extension shutdown, and another extension may call `process.exit()`;
 * either way `exit` is the one event that still runs. Exit handlers cannot wait, so there is no grace here: the
 * normal shutdown keeps its TERM → KILL escalation, and this only catches what that path never reached.
 */
import { processTable, signalTagged } from "../../shared/process-table/index.ts";

/** A tagged process can fork between a scan and its kill; a few passes catch what it forked meanwhile. */
const SCAN_PASSES = 3;

export interface ExitNetSource {
  /** Process-group ids of the jobs alive now (null while a job has not published one). */
  liveGroups(): Iterable<number | null>;
  /** Whether any job was ever started: a runtime that started none has nothing to scan for. */
  startedAny(): boolean;
  readonly runtimeId: string;
}

/** Installs the handler ahead of every other `exit` listener (the pool's waits for loading threads come after it). */
export function installExitNet(source: ExitNetSource): () => void {
  const onExit = () => {
    if (!source.startedAny()) return;
    killOnExit(source);
  };
  process.prependListener("exit", onExit);
  return () => void process.off("exit", onExit);
}

/**
 * Synchronous and never throws: it runs while the process is exiting. The one scan of the process table on Pi's thread
 * that does not yield (a pass of the `proc` backend, or a `ps` waited for): nothing is left to keep responsive.
 */
export function killOnExit(source: ExitNetSource): void {
  for (const pgid of source.liveGroups()) {
    if (pgid === null || pgid <= 1) continue;
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // Gone already.
    }
  }
  // Descendants that left their group, and a job inside spawn whose pid is not published yet, carry the tag.
  for (let pass = 0; pass < SCAN_PASSES; pass += 1) {
    let found;
    try {
      found = processTable().processesOfRuntimesNow([source.runtimeId]);
    } catch {
      return;
    }
    if (found === null || found.length === 0) return;
    signalTagged(
      found.map((process) => process.pid),
      "SIGKILL",
    );
  }
}
