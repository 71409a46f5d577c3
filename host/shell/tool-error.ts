/**
 * How a shell tool refuses a call: a ShellToolError whose message names the fields, thrown by the service and the
 * operations it hands work to (host/shell/service.ts, host/shell/send-input.ts, host/shell/stop.ts). Apart so that
 * those files share one error without importing the service.
 */
import type { Checked } from "./validate.ts";

export class ShellToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ShellToolError";
  }
}

/** A validated request's value, or the validation's message as a ShellToolError. */
export function unwrap<T>(checked: Checked<T>): T {
  if (!checked.ok) throw new ShellToolError(checked.error);
  return checked.value;
}
