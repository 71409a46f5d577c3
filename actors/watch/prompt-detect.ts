/**
 * Does the unterminated last line of a job's output look like a question waiting for an answer? Pure: fed the tail
 * as text, it says yes or no. Only the shape of the end counts (`: `, `? `, `> `, `[y/N]`, `(yes/no)`, `Password:`,
 * `passphrase`), so a progress line that happens to pause is not a prompt unless it ends like one.
 */

/** How much of the tail is looked at: a prompt is short, and a long unterminated line is output, not a question. */
export const PROMPT_MAX_CHARS = 200;

/** Escape sequences a terminal prompt carries (colours, cursor moves, title sets); they say nothing about the question. */
const ESCAPES = /\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]/g;

/** Endings that mean "answer me", tested on the tail with escapes removed. Linear: no nested quantifiers. */
const PROMPT_ENDINGS: readonly RegExp[] = [
  /[:?>›»] $/, // "Name: ", "Continue? ", "> " (REPLs), "› " (interactive scaffolders)
  /[[(](?:y\/n|yes\/no|y\/n\/a|y\/n\/q)[\])] ?:? ?$/i, // "[y/N]", "(yes/no)", "[Y/n]: "
  /\b(?:password|passphrase|passcode|pin|token|otp|username|login)\b[^\n]{0,40}[:?] ?$/i, // "Password:", "Enter passphrase for key '…':"
  /\bpassphrase\b[^\n]{0,80}$/i, // ssh-keygen and gpg ask without a trailing colon sometimes
  /(?:^|\s)[$#%] $/, // an interactive shell waiting for a command
];

/** Text without terminal escape sequences. */
export function stripEscapes(text: string): string {
  return text.replace(ESCAPES, "");
}

/** The tail with terminal escapes and carriage-return overwrites resolved to what the screen would show last. */
export function visibleTail(tail: string): string {
  const plain = stripEscapes(tail);
  const lastReturn = plain.lastIndexOf("\r");
  const shown = lastReturn >= 0 && lastReturn < plain.length - 1 ? plain.slice(lastReturn + 1) : plain.replace(/\r$/, "");
  return shown.length > PROMPT_MAX_CHARS ? shown.slice(-PROMPT_MAX_CHARS) : shown;
}

/** The prompt text when `tail` (the output after the last newline) looks like a question; null otherwise. */
export function detectPrompt(tail: string): string | null {
  if (tail.length === 0 || tail.length > PROMPT_MAX_CHARS * 8) return null;
  const shown = visibleTail(tail);
  if (shown.trim().length === 0) return null;
  return PROMPT_ENDINGS.some((ending) => ending.test(shown)) ? shown : null;
}
