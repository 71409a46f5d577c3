/**
 * Redaction of what a job's actor sends of its output: a shell read (the rendered head and tail) and the retained
 * window the console draws. It runs on the assembled text a read returns, never on chunks, so a secret that arrived in
 * two output chunks is one string again before anything is matched. Pure; nothing here runs per output chunk.
 *
 * Where a read's text is a piece of a longer output, its edges are cut: around an omission marker (head and tail of
 * a long read), at the start of every read after the first (the previous read may have ended inside a secret) and at
 * the end of a read that is not the last. The redactor then also catches a partial secret there (actors/redact/redactor.ts).
 */
import type { Evidence } from "../../mailbox/evidence.ts";
import type { RetainedWindow } from "../../mailbox/output.ts";
import type { Redactor } from "./redactor.ts";

/** The markers a read puts where it left bytes out (actors/output/unread.ts, actors/output/terminal-text.ts). */
export const OMISSION = /\[… \d+ bytes (?:of rendered lines )?omitted; the (?:full|raw) output is in log_path …\]/g;

/** `text` redacted piece by piece between omission markers, each piece cut where a marker or a read edge cuts it. */
export function redactReadText(redactor: Redactor, text: string, edges: { start: boolean; end: boolean }): { text: string; count: number } {
  const pieces: string[] = [];
  let count = 0;
  let at = 0;
  const markers = [...text.matchAll(OMISSION)];
  for (let i = 0; i <= markers.length; i += 1) {
    const marker = markers[i];
    const end = marker === undefined ? text.length : marker.index;
    const result = redactor.redact(text.slice(at, end), { start: i === 0 ? edges.start : true, end: marker === undefined ? edges.end : true });
    pieces.push(result.text);
    count += result.count;
    if (marker !== undefined) {
      pieces.push(marker[0]);
      at = end + marker[0].length;
    }
  }
  return count === 0 ? { text, count: 0 } : { text: pieces.join(""), count };
}

/** The retained window's lines redacted as one text (a PEM block can span lines); each line keeps its place. */
export function redactWindow(redactor: Redactor, window: RetainedWindow): RetainedWindow {
  if (window.lines.length === 0) return window;
  const result = redactor.redactLines(window.lines.map((line) => line.text));
  if (result.count === 0) return window;
  return { ...window, lines: window.lines.map((line, i) => ({ ...line, text: result.lines[i] as string })) };
}

/** A job's evidence with secrets replaced, each block's lines redacted as one text (a PEM block can span lines). */
export function redactEvidence(redactor: Redactor, evidence: Evidence): Evidence {
  const blocks = evidence.blocks.map((block) => {
    const [headline, ...lines] = redactor.redactLines([block.headline, ...block.lines]).lines as [string, ...string[]];
    return { ...block, headline, lines };
  });
  return { ...evidence, blocks };
}
