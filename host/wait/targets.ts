/**
 * Which jobs a wait_jobs call waits for: the ids it names (or, with none named, every job of the session not yet
 * collected), each either a target the call waits on or already settled elsewhere (collected before, reported by its
 * wake or by its own call), with a line that says so. Ids that name no job of this session are an error listing them.
 */
import { join } from "node:path";
import type { JobHandle } from "../runtime/api.ts";
import type { MonitorRecord, MonitorService } from "../monitor/service.ts";
import type { ResultLedger } from "../delivery/ledger.ts";
import { terminalResult } from "../monitor/report.ts";
import type { ShellService } from "../shell/service.ts";
import type { ShellSession } from "../shell/session.ts";
import { goneShellLine, monitorLine, shellStatusLine, type MonitorFacts } from "./lines.ts";
import type { Collected, WaitJobLine } from "./result.ts";
import { refName, WAIT_JOBS, type JobRef } from "./validate.ts";
import type { Checked } from "../tools/checked.ts";
import { usageFields } from "../runtime/usage-line.ts";

export type Target = { kind: "shell"; name: string; session: ShellSession } | { kind: "monitor"; name: string; record: MonitorRecord };

/** A job the call names in order: one it waits on, or one whose line is already known. */
export type Entry = { kind: "target"; target: Target } | { kind: "settled"; line: WaitJobLine };

export function jobOf(target: Target): JobHandle {
  return target.kind === "shell" ? target.session.handle : target.record.job;
}

export function logPathOfJob(job: JobHandle): string | null {
  const result = job.result();
  return result !== null ? result.log.path : join(job.spec.log.dir, job.spec.id);
}

export function monitorFacts(record: MonitorRecord, nowEpochMs: number): MonitorFacts {
  return {
    monitorId: record.monitorId,
    description: record.description,
    result: record.final !== null ? terminalResult(record.final.facts) : null,
    runningMs: Math.max(0, nowEpochMs - record.job.requestedAtEpoch),
    logPath: logPathOfJob(record.job),
    usage: usageFields(record.job.figures().usage),
  };
}

/**
 * Where a monitor's result went, if it went anywhere yet: its own call (direct), its wake, an earlier collection, or
 * nowhere (stopped). Undefined for one whose result is owed asynchronously and not yet sent: this call's to wait on.
 */
function monitorSettled(record: MonitorRecord, ledger: ResultLedger): Collected | undefined {
  if (record.delivery === "direct") return "own_call";
  const state = ledger.stateOf(record.monitorId);
  return state === "submitted" || state === "delivered" ? "wake" : state === "consumed" ? "earlier" : state === "suppressed" ? "none" : undefined;
}

function shellEntry(shell: ShellService, session: ShellSession, now: number): Entry {
  // A read saved by an earlier collection is replayed by write_stdin; this call does not repeat it.
  if (session.replay !== null) return { kind: "settled", line: shellStatusLine(shell.view(session, now), "earlier") };
  return { kind: "target", target: { kind: "shell", name: `job_${session.id}`, session } };
}

function monitorEntry(record: MonitorRecord, ledger: ResultLedger, now: number): Entry {
  const settled = monitorSettled(record, ledger);
  if (settled !== undefined) return { kind: "settled", line: monitorLine(monitorFacts(record, now), settled) };
  return { kind: "target", target: { kind: "monitor", name: record.monitorId, record } };
}

/** Every job of the session not yet collected: what `ids` omitted means. */
function uncollected(shell: ShellService, monitors: MonitorService, ledger: ResultLedger): Entry[] {
  const entries: Entry[] = [];
  for (const session of shell.state.registry.all()) {
    if (session.replay !== null) continue;
    // A job stopped on request was reported by the stop itself.
    const state = session.handle.state();
    if (state.phase === "ended" && state.stopBy !== null) continue;
    // A running service (started with `ready`) is not expected to end: waiting for it would only wait out the timeout.
    if (state.phase !== "ended" && (session.handle.spec.watch?.ready ?? null) !== null) continue;
    entries.push({ kind: "target", target: { kind: "shell", name: `job_${session.id}`, session } });
  }
  const owed = [...monitors.active(), ...monitors.history()].filter((r) => monitorSettled(r, ledger) === undefined);
  for (const record of owed) entries.push({ kind: "target", target: { kind: "monitor", name: record.monitorId, record } });
  return entries;
}

export function resolveEntries(ids: JobRef[] | null, shell: ShellService, monitors: MonitorService, ledger: ResultLedger, nowEpochMs: number): Checked<Entry[]> {
  if (ids === null) return { ok: true, value: uncollected(shell, monitors, ledger) };
  const entries: Entry[] = [];
  const unknown: string[] = [];
  for (const ref of ids) {
    if (ref.kind === "shell") {
      const session = shell.session(ref.sessionId);
      if (session !== undefined) entries.push(shellEntry(shell, session, nowEpochMs));
      else {
        // Collected by a direct read (or evicted): only its log is left, and that is no error.
        const log = shell.state.registry.removedLog(ref.sessionId);
        if (log !== undefined) entries.push({ kind: "settled", line: goneShellLine(ref.sessionId, log) });
        else unknown.push(refName(ref));
      }
      continue;
    }
    const record = monitors.find(ref.monitorId);
    if (record !== undefined) entries.push(monitorEntry(record, ledger, nowEpochMs));
    else unknown.push(refName(ref));
  }
  if (unknown.length === 0) return { ok: true, value: entries };
  const known = [...shell.state.registry.all().map((s) => `job_${s.id}`), ...[...monitors.active(), ...monitors.history()].map((r) => r.monitorId)];
  return {
    ok: false,
    error: `${WAIT_JOBS}: ids: ${unknown.join(", ")} ${unknown.length === 1 ? "is not a job" : "are not jobs"} of this session; its jobs: ${known.length > 0 ? known.join(", ") : "none"}`,
  };
}
