import { describe, expect, it } from "vitest";
import { SessionRegistry, type RegistryRecord } from "../../host/shell/registry.ts";

function record(id: number, endedAt: number | null, readOnce = false): RegistryRecord {
  return { id, endedAt: () => endedAt, readOnce: () => readOnce };
}

describe("SessionRegistry", () => {
  it("refuses a new session when every registered one is running, naming the limit", () => {
    const registry = new SessionRegistry(2);
    registry.add(record(1, null));
    registry.add(record(2, null));
    const admission = registry.admit(() => null);
    expect(admission.ok).toBe(false);
    if (!admission.ok) expect(admission.error).toMatch(/2 shell jobs are already running.*limit is 2/);
    expect(registry.size).toBe(2);
  });
  it("evicts completed history, read-once records first, then the oldest completion; never a running one", () => {
    const registry = new SessionRegistry(3);
    registry.add(record(1, null));
    registry.add(record(2, 100));
    registry.add(record(3, 50));
    expect(registry.admit(() => "/log")).toEqual({ ok: true, evicted: [3] });
    registry.add(record(4, 10, true));
    expect(registry.admit(() => "/log4")).toEqual({ ok: true, evicted: [4] });
    expect(registry.get(1)).toBeDefined();
    expect(registry.removedLog(4)).toBe("/log4");
    expect(registry.removedLog(99)).toBeUndefined();
  });
  it("says why a session is missing: gone with its log, or never known (naming the known ones)", () => {
    const registry = new SessionRegistry(3);
    registry.add(record(1, null));
    registry.add(record(2, 100));
    registry.remove(2, "/log2");
    expect(registry.missing("write_stdin", 2)).toBe(
      "write_stdin: session_id 2 is no longer registered (collected, stopped or evicted); its log remains at /log2",
    );
    registry.add(record(3, 100));
    registry.remove(3, null);
    expect(registry.missing("kill_session", 3)).toMatch(/its log remains at \(no log\)$/);
    expect(registry.missing("set_on_exit", 9)).toBe("set_on_exit: unknown session_id 9; known sessions: 1");
    registry.clear();
    expect(registry.missing("set_on_exit", 9)).toBe("set_on_exit: unknown session_id 9; known sessions: none");
  });
});
