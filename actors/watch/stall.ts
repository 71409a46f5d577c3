/**
 * Is a job stuck? Pure state machine, fed by the actor with output times and CPU samples of the job's process tree.
 *
 * - stalled: nothing printed for `stallMs` and the tree used under 1 % of one core over that quiet time (so a busy
 *   loop that prints nothing is working, not stalled). Only judged when `stallMs` is set.
 * - waiting for input: the last output is an unterminated line that looks like a prompt, and nothing followed it
 *   for PROMPT_QUIET_MS. Judged always.
 * Each is one episode: it is reported once, and output ends it.
 */

/** Quiet time after a prompt-shaped tail before the job counts as waiting for input. */
export const PROMPT_QUIET_MS = 2_000;
/** Under this share of one core over the quiet time, a silent job is stalled. */
export const STALL_CPU_SHARE = 0.01;

export type StallEvent =
  | { kind: "stalled"; quietMs: number; cpuMs: number }
  | { kind: "waiting_for_input"; prompt: string }
  /** Output ended the episode(s) under way. */
  | { kind: "active" };

export interface StallFlags {
  stalled: boolean;
  waitingForInput: boolean;
}

interface CpuSample {
  at: number;
  cpuMs: number;
  /** The step the figure grows by (its resolution): 10 ms from the `proc` backend, a whole second from procps `ps`. */
  stepMs: number;
  /** A process of the tree was running or waiting for a CPU (or a disk) when the sample was taken. */
  runnable: boolean;
}

/**
 * A figure this coarse cannot show 1 % of a core over a stall window: a busy loop that got less than half a core (a
 * loaded machine) may add nothing in whole seconds. Then a process of the tree found runnable also counts as work.
 */
const COARSE_STEP_MS = 1000;

export class StallWatch {
  private lastOutputAt: number;
  /** The prompt-shaped tail since the last output, or null. */
  private prompt: string | null = null;
  private flags: StallFlags = { stalled: false, waitingForInput: false };
  /** CPU samples since the last output, oldest first; the first is the baseline at (or just after) the last output. */
  private samples: CpuSample[] = [];
  private readonly stallMs: number | null;

  constructor(options: { stallMs: number | null; now: number }) {
    this.stallMs = options.stallMs;
    this.lastOutputAt = options.now;
  }

  get state(): Readonly<StallFlags> {
    return this.flags;
  }

  /** Output arrived; `prompt` is what the unterminated tail looks like now (null when it is not a prompt). */
  output(now: number, prompt: string | null): StallEvent[] {
    this.lastOutputAt = now;
    this.prompt = prompt;
    this.samples = [];
    if (!this.flags.stalled && !this.flags.waitingForInput) return [];
    this.flags = { stalled: false, waitingForInput: false };
    return [{ kind: "active" }];
  }

  /**
   * A CPU sample of the tree: total CPU time (user + system) its processes have used so far, in ms, counted in steps of
   * `stepMs`.
   */
  cpu(now: number, cpuMs: number, stepMs = 10, runnable = false): void {
    const last = this.samples[this.samples.length - 1];
    // A process of the tree ended and its time left with it: the window restarts from here, never goes negative.
    if (last !== undefined && cpuMs < last.cpuMs) this.samples = [];
    // Only the baseline (first sample after the output) and the newest are needed, and whether any since was runnable.
    const sawRunnable = runnable || (this.samples[this.samples.length - 1]?.runnable ?? false);
    this.samples.push({ at: now, cpuMs, stepMs, runnable: sawRunnable });
    if (this.samples.length > 2) this.samples.splice(1, this.samples.length - 2);
  }

  /** When a prompt-shaped tail turns into "waiting for input" if nothing follows it, or null. */
  promptCheckAt(): number | null {
    return this.prompt !== null && !this.flags.waitingForInput ? this.lastOutputAt + PROMPT_QUIET_MS : null;
  }

  /** Whether a CPU sample is wanted now: stall detection is on and no stall is reported yet. */
  wantsCpu(): boolean {
    return this.stallMs !== null && !this.flags.stalled;
  }

  /** Judges the time since the last output; returns the episodes that begin now. */
  check(now: number): StallEvent[] {
    const events: StallEvent[] = [];
    const quietMs = now - this.lastOutputAt;
    if (this.prompt !== null && !this.flags.waitingForInput && quietMs >= PROMPT_QUIET_MS) {
      this.flags = { ...this.flags, waitingForInput: true };
      events.push({ kind: "waiting_for_input", prompt: this.prompt });
    }
    if (this.stallMs !== null && !this.flags.stalled && quietMs >= this.stallMs) {
      const first = this.samples[0];
      const last = this.samples[this.samples.length - 1];
      // Without two samples spanning most of the quiet time nothing can be said about the CPU yet; nor before they span
      // two steps of the figure, over which a busy tree always shows one (a whole second's step: procps `ps`).
      const span = first === undefined || last === undefined ? 0 : last.at - first.at;
      if (first !== undefined && last !== undefined && span >= Math.max(this.stallMs * 0.5, 2 * last.stepMs)) {
        const cpuMs = last.cpuMs - first.cpuMs;
        const seenWorking = last.stepMs >= COARSE_STEP_MS && last.runnable;
        if (cpuMs < (last.at - first.at) * STALL_CPU_SHARE && !seenWorking) {
          this.flags = { ...this.flags, stalled: true };
          events.push({ kind: "stalled", quietMs, cpuMs });
        } else {
          // It is working: judge the next window from here.
          this.samples = [{ ...last, runnable: false }];
        }
      }
    }
    return events;
  }
}
