/**
 * The host actor's one periodic sampler. Everything that samples (the metrics recorder, later the job
 * runtime) subscribes to the same timer so the host wakes at most four times a second, whatever the
 * number of samplers.
 */
export interface Sampler {
  /** Adds a listener called with the monotonic time of each tick; returns its unsubscribe function. */
  subscribe(fn: (nowMono: number) => void): () => void;
  /** Starts ticking; idempotent. The timer is unref'd so it never keeps the process alive. */
  start(): void;
  /** Stops ticking; idempotent. Subscriptions are kept so a later start resumes them. */
  stop(): void;
  readonly running: boolean;
}

export function createSampler(periodMs = 250, now: () => number = () => performance.now()): Sampler {
  const listeners = new Set<(nowMono: number) => void>();
  let timer: ReturnType<typeof setInterval> | undefined;

  const tick = (): void => {
    const t = now();
    // A copy, so a listener may unsubscribe (or subscribe another) while the tick is delivered.
    for (const fn of [...listeners]) {
      try {
        fn(t);
      } catch {
        // One broken subscriber must not silence the others or kill the timer; subscribers report their own errors.
      }
    }
  };

  return {
    subscribe(fn) {
      listeners.add(fn);
      return () => {
        listeners.delete(fn);
      };
    },
    start() {
      if (timer !== undefined) return;
      timer = setInterval(tick, periodMs);
      timer.unref();
    },
    stop() {
      if (timer === undefined) return;
      clearInterval(timer);
      timer = undefined;
    },
    get running() {
      return timer !== undefined;
    },
  };
}
