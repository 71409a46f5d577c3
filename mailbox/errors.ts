/**
 * The texts of the errors that cross the mailbox (a refused control call's answer, a result's message) and that the
 * host's runtime reports about a job, named once. Tools, tests and users match on these words, so each is written in
 * one place. Plain functions, no imports: worker threads load it.
 */

// ── Refused control calls (the actor's `WriteAck`, mailbox/control.ts) ─────────────────────────────────────────────

export const notRunning = (): string => "the job is not running";
export const writeQueueFull = (pendingBytes: number, limitBytes: number): string =>
  `write queue full: ${pendingBytes} bytes are still waiting for the process (limit ${limitBytes})`;
export const noStdin = (): string => "this job has no stdin";
export const endStdinOnTerminal = (): string => "end_stdin is for pipes; a terminal has no separate stdin to close";
export const stdinAlreadyClosed = (): string => "stdin is already closed";
export const resizeNeedsTerminal = (): string => "resize needs a terminal job (tty: true)";
export const terminalClosed = (): string => "the terminal is closed";

// ── Calls the host could not get answered ───────────────────────────────────────────────────────────────────────

export const jobHasEnded = (): string => "the job has ended";
export const didNotAnswer = (why: string): string => `the job did not answer: ${why}`;
export const endedBeforeAnswer = (): string => "the job ended before it answered";
export const actorHung = (evidence: string): string => `the job actor is hung: ${evidence}`;

// ── A terminal result's message ─────────────────────────────────────────────────────────────────────────────────

export const stoppedBeforeStart = (): string => noProcessSpawned("stopped before it started");
export const couldNotStart = (why: string): string => `could not start the job: ${why}`;
export const actorCrashed = (why: string): string => `the job actor crashed: ${why}`;
export const endedWithoutReport = (): string => "the job actor ended without reporting";
/** What the supervisor says when it takes over a late actor: what the actor failed to do, and why it is over now. */
export const actorLate = (what: string, why?: string): string => (why === undefined ? `the job actor ${what}` : `the job actor ${what}: ${why}`);
export const missedDeadline = (): string => "missed its deadline";
export const stopNotReportedInGrace = (): string => "had not reported the stop within its grace";
export const stopNotFinished = (): string => "did not finish a requested stop";
export const hadCpuToFinish = (seconds: number): string => `it had ${seconds} s past it with a CPU to finish on`;
/** Why a resource limit stopped the job: the figure that passed it (mailbox/result.ts, LimitTrip). */
export const limitPassed = (what: string, peak: string, limit: string): string =>
  `the job's process tree passed its ${what} limit (${peak}, limit ${limit}); the process group was stopped`;
/** A takeover of a job whose process was never spawned says so. */
export const noProcessSpawned = (message: string): string => `${message}; no process was spawned`;

// ── Starts the runtime refuses ──────────────────────────────────────────────────────────────────────────────────

export const invalidJobSpec = (detail: string): string => `pi-jobs: invalid job spec: ${detail}`;
export const runtimeShutDown = (): string => "the job runtime has shut down";
export const capacityReached = (capacity: number): string =>
  `job capacity reached: ${capacity} jobs are already running; stop or collect one before starting another`;
export const poolClosedBeforeThread = (): string => "the actor pool closed before the job got a thread";
