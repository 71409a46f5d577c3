/**
 * Evidence: output lines that look like something went wrong or needs a look — compiler, test-runner and runtime
 * shapes. Folding (shared/fold.ts) folds them only in long runs of one shape, keeping the first few and the last of
 * each run verbatim, and a digest of omitted output groups them the same way, so an error printed in the middle of a
 * long run reaches the model as it was written, and 10,000 errors of one shape do not crowd out everything else.
 *
 * The list is data: each shape has a name (for tests and docs) and a linear-time pattern, tested on one line at a
 * time. A shape errs towards keeping a line: a false positive costs a verbatim line, a false negative hides an error.
 */

export interface EvidenceShape {
  readonly name: string;
  readonly pattern: RegExp;
}

export const EVIDENCE_SHAPES: readonly EvidenceShape[] = [
  // `error`, `error:`, `errors`, `ERROR`, `Error:` and named errors (`TypeError`, `AssertionError`, `E0308`-style codes follow them).
  { name: "error", pattern: /error/i },
  { name: "failure", pattern: /fail/i },
  { name: "warning", pattern: /warn/i },
  { name: "panic", pattern: /panic|fatal|abort/i },
  { name: "traceback", pattern: /traceback|exception|stack trace|^\s+at \S.*:\d+/i },
  { name: "npm", pattern: /ERR!/ },
  // vitest marks a failed test with a leading `×`; elsewhere `×` is ordinary text (`2× faster`).
  { name: "cross mark", pattern: /[✗✘✖❌]|^\s*× / },
  { name: "assertion", pattern: /assert|expected .* (?:to|but)/i },
  { name: "exit", pattern: /\bexit(?:ed)?(?: with)?(?: code| status)?:? ?-?\d+|\bsignal\b|\bSIG[A-Z]{2,}|segmentation fault|core dumped|\bkilled\b/i },
  { name: "denied", pattern: /denied|not found|no such file|cannot |can't |unable to|refused|timed? ?out/i },
];

// The shapes as alternatives of one pattern, so that a line (or a whole chunk of lines) is scanned once. Matching
// `ERR!` without case changes nothing that matters: `err!` is as much a sign of trouble.
const ALTERNATIVES = EVIDENCE_SHAPES.map((shape) => `(?:${shape.pattern.source})`).join("|");
const ANY_EVIDENCE = new RegExp(ALTERNATIVES, "i");

export function isEvidence(line: string): boolean {
  return ANY_EVIDENCE.test(line);
}

/**
 * Lines that belong to the error line before them, so that an error reaches the model with what explains it: lines
 * indented at least two columns deeper than that error line (traceback frames, Java's `\tat …`, a compiler's code
 * frame and notes, vitest's `→` and `❯` lines), and at any indentation a code frame's gutter (`12 | code`,
 * `   |     ^~~`), caret and tilde lines, rustc's `-->` and `= note`, pytest's `>` and `E ` lines, a `- Expected` /
 * `+ Received` diff, Java's `Caused by:` and `... 12 more`, gcc's `file:line: note:`. A line one column deeper is a
 * neighbour, not part of it: vitest indents every test's line by one space, and a Node warning at column 0 must not
 * take them all. Tested only on the lines that follow an error line.
 */
const CONTINUATION = /^(?:\d+ *[|│]|[|│^~>❯→]|-->|= |E {2,}|[-+](?: |$|\S)|Caused by:|\.\.\. \d+ more|\S+:\d+(?::\d+)?: note:)/;

/** The columns of a line's leading spaces and tabs (a tab counts as four). */
export function indentOf(line: string): number {
  let columns = 0;
  for (let i = 0; ; i += 1) {
    const c = line.charCodeAt(i);
    if (c === 32) columns += 1;
    else if (c === 9) columns += 4;
    else return columns;
  }
}

/** `line` belongs to an error line indented `indent` columns deep. */
export function isContinuation(line: string, indent: number): boolean {
  const own = indentOf(line);
  return own >= indent + 2 || CONTINUATION.test(line.trimStart());
}

/**
 * A plain line that introduces the error line after it: one that ends with a colon (`f101.c: In function 'f101':`)
 * or a test runner's section heading (`____ test_total ____`). Kept as the first line of that error's block.
 */
const HEADER = /:\s*$|^_{3,} \S.* _{3,}$/;

export function isHeader(line: string): boolean {
  return line.length <= 300 && HEADER.test(line);
}
