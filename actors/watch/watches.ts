/**
 * The watches an actor keeps on its running job, in one place: the stall and prompt judgement (actors/watch/stall.ts),
 * readiness (actors/watch/ready.ts), the ports the job's processes listen on and the tree's resource use against its
 * limits and the watchdog (actors/watch/usage-watch.ts), whose samples also tell the stall watch how busy the tree is.
 * It asks the process table (shared/process-table/) and runs patterns here, on the job's thread; the host learns the
 * flags from the shared cell and the episodes and the readiness from one message each.
 */
import type { Notice, ReadyReport } from "../../mailbox/messages.ts";
import type { WatchSpec } from "../../mailbox/spec.ts";
import type { JobCellWriter } from "../../mailbox/cell.ts";
import type { LimitTrip } from "../../mailbox/result.ts";
import { processTable } from "../../shared/process-table/index.ts";
import { detectPrompt, PROMPT_MAX_CHARS } from "./prompt-detect.ts";
import { ReadyWatch } from "./ready.ts";
import { StallWatch, type StallEvent } from "./stall.ts";
import { UsageWatch, type SampleCpu } from "./usage-watch.ts";
import { UnterminatedLine } from "../output/unterminated-line.ts";

/** How much of an unterminated line is kept to judge whether it is a prompt. */
const TAIL_CHARS = PROMPT_MAX_CHARS * 4;

export interface JobWatchOptions {
  spec: WatchSpec | undefined;
  tag: string;
  pid: number;
  /** Monotonic ms of the spawn. */
  spawnedAt: number;
  spawnedAtEpoch: number;
  cell: JobCellWriter;
  notice(kind: Extract<Notice["kind"], "stalled" | "waiting_for_input" | "runaway">, detail: string | null): void;
  ready(report: ReadyReport): void;
  /** The tree passed one of the job's limits: the actor stops the job. */
  limitPassed(trip: LimitTrip): void;
}

type Source = "stdout" | "stderr" | "pty";

export class JobWatch {
  private readonly options: JobWatchOptions;
  private readonly stall: StallWatch;
  private readonly readyWatch: ReadyWatch | null;
  private readonly tail = new UnterminatedLine(TAIL_CHARS);
  private promptTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly usage: UsageWatch;

  constructor(options: JobWatchOptions) {
    this.options = options;
    const stallMs = options.spec?.stallMs ?? null;
    this.stall = new StallWatch({ stallMs, now: performance.now() });
    this.usage = new UsageWatch({
      tag: options.tag,
      pid: options.pid,
      spawnedAtEpoch: options.spawnedAtEpoch,
      limits: options.spec?.limits ?? null,
      watchdog: options.spec?.watchdog ?? null,
      cell: options.cell,
      limitPassed: (trip) => options.limitPassed(trip),
      runaway: (reason) => options.notice("runaway", reason),
      // A quarter of the stall time between samples: the quiet window always spans several of them.
      ...(stallMs !== null ? { everyMs: Math.min(5_000, Math.max(250, Math.round(stallMs / 4))), onSample: (at, usage, cpu) => this.sampled(at, usage.cpuMs, cpu) } : {}),
    });
    const ready = options.spec?.ready ?? null;
    this.readyWatch = ready === null
      ? null
      : new ReadyWatch({ spec: ready, spawnedAt: options.spawnedAt, pids: () => this.pids(), report: (report) => options.ready(report) });
  }

  /** The job's live processes: every process carrying its tag, or its leader where tags cannot be read. */
  async pids(): Promise<number[]> {
    const found = await processTable().scanTag(this.options.tag, { firstPid: this.options.pid, spawnedAt: this.options.spawnedAtEpoch });
    const tagged = found?.tagged ?? null;
    if (tagged === null) return [this.options.pid];
    return tagged.includes(this.options.pid) ? tagged : [this.options.pid, ...tagged];
  }

  async listening(): Promise<number[] | null> {
    return processTable().listening(await this.pids());
  }

  feed(source: Source, chunk: Uint8Array): void {
    this.readyWatch?.feed(source, chunk);
    this.tail.feed(source, chunk);
    const now = performance.now();
    this.apply(this.stall.output(now, detectPrompt(this.tail.text)));
    this.armPromptCheck();
  }

  dispose(): void {
    this.usage.dispose();
    this.readyWatch?.dispose();
    if (this.promptTimer !== null) clearTimeout(this.promptTimer);
  }

  private armPromptCheck(): void {
    if (this.promptTimer !== null) clearTimeout(this.promptTimer);
    this.promptTimer = null;
    const at = this.stall.promptCheckAt();
    if (at === null) return;
    this.promptTimer = setTimeout(() => {
      this.promptTimer = null;
      this.apply(this.stall.check(performance.now()));
      // A timer counts from the event loop's cached time, which can be older than the output's performance.now():
      // it may fire before the quiet time is over. Then it is armed again for what is left.
      this.armPromptCheck();
    }, Math.max(0, Math.ceil(at - performance.now())));
    this.promptTimer.unref();
  }

  /** A sample of the tree's CPU (the usage watch's): without samples the watch never calls the job stalled. */
  private sampled(at: number, cpuMs: number, cpu: SampleCpu): void {
    if (!this.stall.wantsCpu()) return;
    this.stall.cpu(at, cpuMs, cpu.stepMs, cpu.runnable);
    this.apply(this.stall.check(at));
  }

  private apply(events: readonly StallEvent[]): void {
    if (events.length === 0) return;
    this.options.cell.setStuck(this.stall.state);
    for (const event of events) {
      if (event.kind === "stalled") this.options.notice("stalled", null);
      else if (event.kind === "waiting_for_input") this.options.notice("waiting_for_input", event.prompt);
    }
  }
}
