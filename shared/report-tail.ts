/**
 * What a monitor's report shows of its diagnostic tail (up to 100 lines, every one kept in the structured result):
 * the entries that hold its newest REPORT_TAIL_LINES lines, the report's evidence covering the error-like lines before
 * them, unless the whole tail, folded exactly (shared/fold.ts), is hardly longer. A long log's tail of distinct lines
 * then costs the model 40 lines, not 100, while a tail that folds well (a counter, repeats) stays whole. The actor leaves the shown lines out of the evidence and the host shows them: both ask here. Pure.
 */
import type { DiagnosticLine } from "../mailbox/monitor.ts";
import { FOLD_MARK, foldLines } from "./fold.ts";

/** Lines of a monitor's tail its report's text shows at most. */
export const REPORT_TAIL_LINES = 40;
/** The newest lines of a tail stay verbatim: what a command printed last is where a reader looks for the cause. */
const KEEP_LAST = 5;

/** `[stderr] text`, with repeats and display clipping stated in the label so the text itself stays verbatim. */
export function labelOutputLine(line: DiagnosticLine): string {
  const count = line.count > 1 ? ` ×${line.count}` : "";
  const clipped = line.clipped ? " clipped" : "";
  return `[${line.source}${count}${clipped}] ${line.text}`;
}

/** The entries' labelled lines folded exactly; the matched line is evidence and stays verbatim. */
function folded(entries: readonly DiagnosticLine[], matched: string | null): string[] {
  const keep = matched === null ? undefined : (line: string) => line.endsWith(`] ${matched}`);
  return foldLines(entries.map(labelOutputLine), { mode: "exact", keepLast: KEEP_LAST, ...(keep ? { keep } : {}) }).lines;
}

/** The whole tail is shown when its folded text is at most this much longer than the newest lines' alone. */
const WHOLE_TAIL_SLACK = 1.25;

const size = (lines: readonly string[]): number => lines.reduce((sum, line) => sum + line.length + 1, 0);

/** How many entries at the end of `tail` the report shows. */
export function shownTailEntries(tail: readonly DiagnosticLine[], matched: string | null): number {
  let lines = 0;
  let entries = 0;
  while (entries < tail.length && lines < REPORT_TAIL_LINES) {
    lines += (tail[tail.length - 1 - entries] as DiagnosticLine).count;
    entries += 1;
  }
  if (entries === tail.length) return entries;
  const newest = size(folded(tail.slice(tail.length - entries), matched));
  return size(folded(tail, matched)) <= newest * WHOLE_TAIL_SLACK ? tail.length : entries;
}

/** The lines those entries stand for. */
export function shownTailLines(tail: readonly DiagnosticLine[], matched: string | null): number {
  return tail.slice(tail.length - shownTailEntries(tail, matched)).reduce((sum, entry) => sum + entry.count, 0);
}

/** The report's `output=` lines: the shown entries folded, after a line that counts the ones left out. */
export function reportTail(tail: readonly DiagnosticLine[], matched: string | null): string[] {
  const shown = tail.slice(tail.length - shownTailEntries(tail, matched));
  const earlier = tail.slice(0, tail.length - shown.length).reduce((sum, line) => sum + line.count, 0);
  const lines = folded(shown, matched);
  return earlier === 0 ? lines : [`${FOLD_MARK}${earlier} earlier lines: the structured result's output⟫`, ...lines];
}
