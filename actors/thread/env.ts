/**
 * This thread's environment as a plain object, copied once.
 *
 * `process.env` is not a plain object: every property read goes through Node's native environment store. A job read
 * it whole several times (its process's environment, the lookup of its shell on PATH, the redactor's secret values),
 * which cost about a millisecond of CPU per job. A worker thread's `process.env` is its own copy of the host's, taken
 * when the thread was made, and nothing in an actor changes it, so one snapshot per thread holds the same values.
 */
export const threadEnv: Readonly<Record<string, string>> = Object.freeze({ ...process.env } as Record<string, string>);
