/**
 * The last lines of a job's final read, as a report of its end shows them (a wait_jobs line, a wake): a few for a
 * success, more for a failure, folded as a read over its budget is (the whole read is replayed by write_stdin, the
 * log keeps every byte), the very last ones verbatim. Pure.
 */
import { foldLines, printedLineCount } from "../shared/fold.ts";

/** Output lines kept per job: enough to see a success's last word, and a failure's cause. */
export const SUCCESS_LINES = 3;
export const FAILURE_LINES = 12;
/** A wake says a job ended and why: fewer of a failure's last lines, beside its evidence. */
export const WAKE_FAILURE_LINES = 6;

/**
 * The last `keep` lines of a read (trailing blank lines do not count), folded as a read over its budget is (the whole
 * read is replayed by write_stdin, the log keeps every byte), how many came before them, and how many program lines
 * the kept ones stand for.
 */
export function lastLines(text: string, keep: number): { text: string; omitted: number; shown: number } {
  const lines = text.split("\n");
  while (lines.length > 0 && lines[lines.length - 1]!.trim() === "") lines.pop();
  const kept = lines.slice(-keep);
  const folded = foldLines(kept, { mode: "lossy", keepLast: KEEP_LAST });
  // Counted as the program printed them: a fold above the kept lines stands for its N lines.
  return { text: folded.lines.join("\n"), omitted: printedLineCount(lines.slice(0, lines.length - kept.length)), shown: printedLineCount(kept) };
}

/** The last lines of a job's line that never fold: what it printed last. */
const KEEP_LAST = 3;

