/**
 * Start → quit → adopt, over and over, with real Pi (SDK Pis in this process, each its own extension instance with
 * its own ownership lock, as tests/e2e/persist-adopt.test.ts starts them), all in one project directory:
 *
 *   node tests/stress/persist-cycles.ts [cycles]      # 200 cycles by default; prints the outcome as JSON
 *
 * Each cycle's Pi adopts what the directory's registry holds, starts a persisted job (`echo; sleep; exit <code>`,
 * on_exit "wake", its code its own: 1 + cycle % 250; it ends at once, within a cycle or two, or a few cycles later)
 * and an ordinary job (`sleep 60`), lists its jobs, waits until it is idle, and quits. A last Pi adopts what is left
 * and waits for every job to end. Then it checks:
 *
 * - no lost exit code: every persisted job's end was delivered with its own code, by its wake (or by the
 *   exec_command answer that saw it end, which owes no wake);
 * - no duplicate report: no job's end was delivered twice (across every Pi);
 * - no duplicate adoption: no Pi lists an entry twice, and no entry is listed again by a Pi after the one that
 *   reported its end;
 * - no ordinary job surviving: each one's process is gone once its Pi has quit;
 * - no keeper left behind: every keeper is gone, and the registry holds no entry of the project.
 *
 * A job that ends about when its Pi quits is the hard case: its wake may be handed to Pi and never shown. Such an
 * end is not yet reported (host/shell/persist-release.ts), so the next Pi reports it; the run counts it lost if not.
 *
 * tests/e2e/persist-cycles.test.ts runs a few cycles of the same.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { projectDir } from "../../host/persist/registry.ts";
import { ownerLockReleased } from "../e2e/harness/persisted-entry.ts";
import { startSdkSession, wakeMessages, type SdkSession } from "../e2e/harness/sdk.ts";
import { answer, call, ends } from "../e2e/harness/turns.ts";
import { pidAlive } from "../integration/helpers.ts";

export interface CycleOutcome {
  cycles: number;
  seconds: number;
  /** Persisted jobs whose end no wake delivered, or delivered with another code. */
  lostExitCodes: string[];
  /** Persisted jobs whose end was delivered more than once. */
  duplicateReports: string[];
  /** Entries listed twice by one Pi, or listed again after their end was reported. */
  duplicateAdoptions: string[];
  /** Ordinary jobs whose process outlived their Pi. */
  survivingOrdinary: number[];
  /** Keepers still alive at the end, and entries left in the registry. */
  keepersLeft: number[];
  entriesLeft: string[];
  /** How long each Pi took from its start to its jobs listed (its session_start, the adoption and one turn), ms. */
  listedAfterMs: { median: number; p95: number; max: number };
  /**
   * How long the directory's ownership lock took to come free after a Pi quit (its holder ends once Pi lets go), ms:
   * the next Pi is started only then, as a Pi started before would list the jobs as another Pi's.
   */
  lockFreeAfterMs: { median: number; max: number };
}



/**
 * How long the cycle's persisted job sleeps before it exits: within its own Pi (after exec_command has answered, so
 * that its end is the wake's to report), within a cycle or two, a few cycles on.
 */
const SLEEPS = [0.6, 1.5, 4];
const codeOf = (cycle: number): number => 1 + (cycle % 250);
const marker = (cycle: number): string => `persisted-cycle-${cycle}`;
const cycleIn = (cmd: string): string | null => /persisted-cycle-(\d+);/.exec(cmd)?.[1] ?? null;

async function until(probe: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() >= deadline) return false;
    await sleep(20);
  }
  return true;
}

/** Idle: no run, and none began for `quietMs` (a wake's turn starts a moment after the job's end). */
async function settle(sdk: SdkSession, quietMs: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let count = sdk.settledCount();
  let quietSince = Date.now();
  while (Date.now() < deadline) {
    await sleep(25);
    if (sdk.session.isStreaming || sdk.settledCount() !== count) {
      count = sdk.settledCount();
      quietSince = Date.now();
    } else if (Date.now() - quietSince >= quietMs) return;
  }
}

const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

export async function runCycles(
  cycles: number,
  options: { log?: (line: string) => void } = {},
): Promise<CycleOutcome> {
  const log = options.log ?? (() => {});
  const began = performance.now();
  const cwd = mkdtempSync(join(tmpdir(), "persist-cycles-"));
  const reports = new Map<string, number[]>();
  const reportedBy = new Map<string, number>();
  /** Each cycle's entry, as the Pis list it. */
  const entryOf = new Map<string, string>();
  const duplicateAdoptions: string[] = [];
  const survivingOrdinary: number[] = [];
  const keepers = new Set<number>();
  const listedAfter: number[] = [];
  const lockWaits: number[] = [];
  // One more Pi than cycles: the last one only adopts and waits for every job to end.
  for (let pi = 0; pi <= cycles; pi += 1) {
    const last = pi === cycles;
    const script = last
      ? [call("list_sessions", {}), answer("listed")]
      : [
          call("exec_command", { cmd: `echo ${marker(pi)}; sleep ${SLEEPS[pi % SLEEPS.length]}; exit ${codeOf(pi)}`, persist: true, on_exit: "wake", yield_time_ms: 100 }),
          call("exec_command", { cmd: `echo $$ > ordinary-${pi}.pid; exec sleep 60`, yield_time_ms: 100 }),
          call("list_sessions", {}),
          answer("started"),
        ];
    const startedAt = performance.now();
    const sdk = await startSdkSession({ cwd, responses: [...script, ...Array.from({ length: 40 }, () => answer("noted"))] });
    try {
      await sdk.prompt("go");
      listedAfter.push(performance.now() - startedAt);
      const listed = ends(sdk).find((end) => end.toolName === "list_sessions")!.result.details.sessions as { cmd: string; persisted?: { entry: string } }[];
      const entries = listed.flatMap((s) => (s.persisted ? [s.persisted.entry] : []));
      for (const s of listed) if (s.persisted) entryOf.set(cycleIn(s.cmd) ?? "", s.persisted.entry);
      for (const entry of entries) {
        if (entries.indexOf(entry) !== entries.lastIndexOf(entry)) duplicateAdoptions.push(`Pi ${pi} lists ${entry} twice`);
        const by = reportedBy.get(entry);
        if (by !== undefined) duplicateAdoptions.push(`Pi ${pi} lists ${entry}, whose end Pi ${by} reported`);
        const keeper = /^keeper (\d+) /.exec(existsSync(join(entry, "keeper")) ? readFileSync(join(entry, "keeper"), "utf8") : "")?.[1];
        if (keeper !== undefined) keepers.add(Number(keeper));
      }
      if (last) {
        // Every job left ends within its sleep; its wake follows.
        await until(() => readdirSync(projectDir(cwd).dir).every((name) => !name.startsWith("job-") || existsSync(join(projectDir(cwd).dir, name, "end"))), 15_000);
        await settle(sdk, 1_500, 30_000);
      } else {
        const pidFile = join(cwd, `ordinary-${pi}.pid`);
        await until(() => existsSync(pidFile) && Number(readFileSync(pidFile, "utf8").trim()) > 1, 10_000);
        await settle(sdk, 300, 20_000);
      }
    } finally {
      // Counted once this Pi has quit: a wake it showed while quitting was shown too.
      await sdk.dispose();
      // An end is reported by its wake, by an exec_command answer that saw it (which owes no wake then), or by a
      // list_sessions answer that showed its exit code; the same Pi may show it more than once, which counts once.
      const answered = ends(sdk).filter((end) => end.toolName === "exec_command" && end.result.details?.exit_code != null).map((end) => end.result.details);
      const listedEnded = ends(sdk)
        .filter((end) => end.toolName === "list_sessions")
        .flatMap((end) => (end.result.details.sessions as { cmd: string; exit_code: number | null }[]).filter((session) => session.exit_code !== null));
      const byThisPi = new Map<string, number>();
      for (const session of [...wakeMessages(sdk).flatMap((wake) => wake.details.sessions), ...answered, ...listedEnded] as { cmd: string; exit_code: number | null }[]) {
        const cycle = cycleIn(session.cmd);
        if (cycle !== null && !byThisPi.has(cycle)) byThisPi.set(cycle, session.exit_code ?? -1);
      }
      for (const [cycle, code] of byThisPi) {
        reports.set(cycle, [...(reports.get(cycle) ?? []), code]);
        const entry = entryOf.get(cycle);
        if (entry !== undefined) reportedBy.set(entry, pi);
      }
    }
    lockWaits.push(await ownerLockReleased(cwd));
    if (!last) {
      const ordinary = Number(readFileSync(join(cwd, `ordinary-${pi}.pid`), "utf8").trim());
      if (!(await until(() => !pidAlive(ordinary), 5_000))) survivingOrdinary.push(ordinary);
    }
    if (pi % 10 === 9) log(`${pi + 1} cycles, ${Math.round((performance.now() - began) / 1000)} s`);
  }
  const lostExitCodes: string[] = [];
  const duplicateReports: string[] = [];
  for (let cycle = 0; cycle < cycles; cycle += 1) {
    const codes = reports.get(String(cycle)) ?? [];
    if (!codes.includes(codeOf(cycle))) lostExitCodes.push(`cycle ${cycle}: expected ${codeOf(cycle)}, delivered ${JSON.stringify(codes)}`);
    if (codes.length > 1) duplicateReports.push(`cycle ${cycle}: delivered ${JSON.stringify(codes)}`);
  }
  await until(() => [...keepers].every((pid) => !pidAlive(pid)), 5_000);
  const folder = projectDir(cwd).dir;
  const entriesLeft = readdirSync(folder).filter((name) => name.startsWith("job-"));
  const outcome: CycleOutcome = {
    cycles,
    seconds: Math.round((performance.now() - began) / 1000),
    lostExitCodes,
    duplicateReports,
    duplicateAdoptions,
    survivingOrdinary,
    keepersLeft: [...keepers].filter(pidAlive),
    entriesLeft,
    listedAfterMs: (() => {
      const sorted = listedAfter.map(Math.round).sort((a, b) => a - b);
      return { median: quantile(sorted, 0.5), p95: quantile(sorted, 0.95), max: sorted.at(-1) ?? 0 };
    })(),
    lockFreeAfterMs: (() => {
      const sorted = lockWaits.map(Math.round).sort((a, b) => a - b);
      return { median: quantile(sorted, 0.5), max: sorted.at(-1) ?? 0 };
    })(),
  };
  if (entriesLeft.length === 0) rmSync(folder, { recursive: true, force: true });
  rmSync(cwd, { recursive: true, force: true });
  return outcome;
}

/** Whether the outcome holds: nothing lost, doubled or left behind. */
export function clean(outcome: CycleOutcome): boolean {
  const { lostExitCodes, duplicateReports, duplicateAdoptions, survivingOrdinary, keepersLeft, entriesLeft } = outcome;
  return [lostExitCodes, duplicateReports, duplicateAdoptions, survivingOrdinary, keepersLeft, entriesLeft].every((list) => list.length === 0);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const cycles = Number(process.argv[2] ?? 200);
  if (!Number.isInteger(cycles) || cycles < 1) throw new Error(`cycles must be a whole number above 0, got ${JSON.stringify(process.argv[2])}`);
  const outcome = await runCycles(cycles, { log: (line) => console.error(line) });
  console.log(JSON.stringify(outcome, null, 2));
  process.exitCode = clean(outcome) ? 0 : 1;
}
