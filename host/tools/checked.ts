/**
 * How every tool checks its arguments and refuses a call: a check gives the value or an error whose message names the
 * tool and the field, and a refusal is a ToolError with that message. Pi shows the message to the model as is, so it
 * can fix its call; no process starts.
 */

/** An argument checked: its value, or why it was refused, naming the field. */
export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

/** A refused check. */
export function fail<T = never>(error: string): Checked<T> {
  return { ok: false, error };
}

/** A tool's refusal of a call; the message names the tool and the fields. */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ToolError";
  }
}

/** A checked argument's value, or its error as a ToolError. */
export function unwrap<T>(checked: Checked<T>): T {
  if (!checked.ok) throw new ToolError(checked.error);
  return checked.value;
}
