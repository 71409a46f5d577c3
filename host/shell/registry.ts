/**
 * The numbered shell sessions (1, 2, 3… as the model sees them): running jobs and retained completed ones, bounded
 * at 64. Making room evicts completed history only — collected or stopped records first, then the oldest completion;
 * a running process is never evicted, so a registry full of running jobs refuses the next one.
 */
import { MAX_SESSIONS } from "./limits.ts";

export interface RegistryRecord {
  readonly id: number;
  /** Epoch ms of the end, or null while running. */
  endedAt(): number | null;
  /** Its final output was already read once (inside a script); eviction loses less. */
  readOnce(): boolean;
}

export type Admission = { ok: true; evicted: number[] } | { ok: false; error: string };

export class SessionRegistry<T extends RegistryRecord> {
  private readonly records = new Map<number, T>();
  readonly capacity: number;
  /** Log paths of evicted sessions, so a late read can point at the log instead of saying "unknown". */
  private readonly evictedLogs = new Map<number, string | null>();

  constructor(capacity = MAX_SESSIONS) {
    this.capacity = capacity;
  }

  /** Makes room for one more session, evicting completed history if needed. */
  admit(logPathOf: (record: T) => string | null): Admission {
    if (this.records.size < this.capacity) return { ok: true, evicted: [] };
    const completed = [...this.records.values()].filter((r) => r.endedAt() !== null);
    if (completed.length === 0) {
      return {
        ok: false,
        error: `exec_command refused: ${this.capacity} shell jobs are already running (the limit is ${this.capacity}). Stop one with kill_session, or wait for one to finish, then retry.`,
      };
    }
    completed.sort((a, b) => Number(b.readOnce()) - Number(a.readOnce()) || a.endedAt()! - b.endedAt()!);
    const victim = completed[0]!;
    this.remove(victim.id, logPathOf(victim));
    return { ok: true, evicted: [victim.id] };
  }

  add(record: T): void {
    this.records.set(record.id, record);
  }

  get(id: number): T | undefined {
    return this.records.get(id);
  }

  /** Removes a session; its log path is remembered for later questions about it. */
  remove(id: number, logPath: string | null): void {
    if (!this.records.delete(id)) return;
    this.evictedLogs.set(id, logPath);
    // Bounded like everything else: keep the most recent few hundred.
    if (this.evictedLogs.size > 256) this.evictedLogs.delete(this.evictedLogs.keys().next().value!);
  }

  /** For a session that is no longer registered: its log path (null if it had none), or undefined if never seen. */
  removedLog(id: number): string | null | undefined {
    return this.evictedLogs.get(id);
  }

  /** Why `id` is not registered, as the tool named `tool` reports it: gone (with its log), or never known. */
  missing(tool: string, id: number): string {
    const log = this.evictedLogs.get(id);
    if (log !== undefined) {
      return `${tool}: session_id ${id} is no longer registered (collected, stopped or evicted); its log remains at ${log ?? "(no log)"}`;
    }
    const known = this.all().map((record) => record.id);
    return `${tool}: unknown session_id ${id}; known sessions: ${known.length > 0 ? known.join(", ") : "none"}`;
  }

  all(): T[] {
    return [...this.records.values()].sort((a, b) => a.id - b.id);
  }

  get size(): number {
    return this.records.size;
  }

  clear(): void {
    this.records.clear();
  }
}
