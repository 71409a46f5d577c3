/**
 * Codemode scripts as the shell tools see them: a call a script makes carries the id `<outer>/<n>`, and the sessions
 * a running script touched are remembered under its outermost call until that call finalizes (its receipt names
 * them). Pure.
 */

/** The outermost call id of a nested (codemode) call, or null for a direct call. */
export function outerCallOf(toolCallId: string): string | null {
  const slash = toolCallId.indexOf("/");
  return slash === -1 ? null : toolCallId.slice(0, slash);
}

/** Notes that the call touched the session, when the call belongs to a script. */
export function touchScript(scripts: Map<string, Set<number>>, toolCallId: string, sessionId: number): void {
  const outer = outerCallOf(toolCallId);
  if (outer === null) return;
  let touched = scripts.get(outer);
  if (touched === undefined) {
    touched = new Set();
    scripts.set(outer, touched);
  }
  touched.add(sessionId);
}
