/**
 * How much of a job's evidence (mailbox/evidence.ts) a report shows: its blocks in the order they were printed within
 * a budget, then how many more there were and the last one, whatever the budget: the last error a run printed is as
 * telling as its first. A monitor's report shows up to 4 KiB; a line of wait_jobs or a wake shows a few blocks. Pure.
 */
import type { Evidence } from "../mailbox/evidence.ts";
import { FOLD_MARK } from "../shared/fold.ts";
import { oneLine } from "./safety/escape.ts";

export interface EvidenceBudget {
  /** Characters of the blocks shown before the last one. */
  chars: number;
  /** Blocks shown before the last one. */
  blocks: number;
}

/** A monitor's report: the first 20 blocks and 4 KiB. */
export const REPORT_EVIDENCE: EvidenceBudget = { chars: 4096, blocks: 20 };
/** A job's line in wait_jobs or a wake: a few blocks (three failing tests, each with its cause). */
export const LINE_EVIDENCE: EvidenceBudget = { chars: 3200, blocks: 12 };

/** The evidence's lines as shown within `budget`; empty when the run printed nothing error-like. */
export function evidenceLines(evidence: Evidence, budget: EvidenceBudget): string[] {
  const { blocks } = evidence;
  if (blocks.length === 0) return [];
  const last = blocks[blocks.length - 1]!;
  const out: string[] = [];
  let used = 0;
  let shown = 0;
  for (const block of blocks.slice(0, -1)) {
    const size = block.lines.reduce((sum, line) => sum + line.length + 1, 0);
    if (shown >= budget.blocks || (shown > 0 && used + size > budget.chars)) break;
    out.push(...block.lines);
    used += size;
    shown += 1;
  }
  const more = blocks.length - 1 - shown + evidence.omitted;
  if (more > 0) out.push(`${FOLD_MARK}${more} more error-like block${more === 1 ? "" : "s"}; the last of them:⟫`);
  out.push(...last.lines);
  return out;
}

/**
 * The evidence without the block that is only the contract's matched line: the report shows that line already
 * (`result=`, a capture or `matched=`), as the sentinel `__RESULT__ {"warnings":0}` that looks like a warning.
 */
export function withoutMatched(evidence: Evidence, matched: string | null): Evidence {
  if (matched === null) return evidence;
  const blocks = evidence.blocks.filter((block) => !(block.lines.length === 1 && block.headline === matched));
  return blocks.length === evidence.blocks.length ? evidence : { ...evidence, blocks };
}

/** Where the first error is, for a `next=` step: `line 6: f101.c:2:14: error: 'undefined_symbol' undeclared…`. */
export function firstError(evidence: Evidence): string | null {
  const first = evidence.blocks[0];
  return first === undefined ? null : `line ${first.line}: ${oneLine(first.headline, 100)}`;
}
