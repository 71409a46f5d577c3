/**
 * How pi-jobs reads an environment switch, and the one switch that code on both sides of the mailbox reads. Every
 * switch is named PI_JOBS_*; host/config.ts lists them all. This part lives in shared/ because the actor threads load
 * it (where a thread's entry lives, shared/entry-url.ts) and they may import no host code.
 */

/** An environment as a switch reads it: `process.env`, or a plain object in a test. */
export type Env = Readonly<Record<string, string | undefined>>;

/** A switch's current name, then the older names still read as its aliases. */
export type SwitchNames = readonly [name: string, ...aliases: string[]];

/** A switch's raw value and the variable it came from, so that a message names the variable the user set. */
export interface SwitchValue {
  variable: string;
  raw: string;
}

/** The switch as set: under its current name when that is set (the name wins over an alias), else under an alias. */
export function readSwitch(env: Env, names: SwitchNames): SwitchValue | null {
  for (const variable of names) {
    const raw = env[variable];
    if (raw !== undefined) return { variable, raw };
  }
  return null;
}

export const WORKERS_SWITCH: SwitchNames = ["PI_JOBS_WORKERS"];

/**
 * `PI_JOBS_WORKERS=dist`: a checkout's threads and spawner run the JavaScript compiled into dist/ instead of their
 * TypeScript source, as an installed copy's do. `npm start` sets it, having compiled dist/ if its sources changed
 * (demo/start.ts); any other value keeps the source.
 */
export function workersFromDist(env: Env): boolean {
  return readSwitch(env, WORKERS_SWITCH)?.raw === "dist";
}

export const PROCESS_TABLE_SWITCH: SwitchNames = ["PI_JOBS_PROCESS_TABLE"];

/**
 * `PI_JOBS_PROCESS_TABLE=ps`: the process table reads `ps` and `lsof` even where the kernel's process files can be read, as it does on
 * macOS (shared/process-table/). Any other value leaves the choice to the machine.
 */
export function processTableForced(env: Env): boolean {
  return readSwitch(env, PROCESS_TABLE_SWITCH)?.raw === "ps";
}
