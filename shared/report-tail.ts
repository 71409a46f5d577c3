/**
 * How much of a monitor's diagnostic tail its report's text shows: the entries, newest first, that hold its last
 * REPORT_TAIL_LINES lines. The structured result keeps the whole tail (up to 100 lines), and the report's evidence
 * covers the error-like lines before the part shown, so a long log's tail costs the model 40 lines, not 100. The actor
 * leaves the shown lines out of the evidence, the host shows them: both ask here. Pure.
 */

/** Lines of a monitor's tail its report's text shows. */
export const REPORT_TAIL_LINES = 40;

/** How many entries at the end of `tail` (each standing for `count` identical lines) the report shows. */
export function shownTailEntries(tail: readonly { count: number }[]): number {
  let lines = 0;
  let entries = 0;
  while (entries < tail.length && lines < REPORT_TAIL_LINES) {
    lines += (tail[tail.length - 1 - entries] as { count: number }).count;
    entries += 1;
  }
  return entries;
}

/** The lines those entries stand for. */
export function shownTailLines(tail: readonly { count: number }[]): number {
  return tail.slice(tail.length - shownTailEntries(tail)).reduce((sum, entry) => sum + entry.count, 0);
}
