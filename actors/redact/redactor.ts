/**
 * Secrets out of what a job shows the model and the screen. Pure: a redactor is built from a job's effective
 * environment (once per thread for the jobs that inherit the thread's, actors/job/actor.ts) and then replaces, in
 * any text it is given, each secret with `[redacted:NAME]`:
 *   - the values of environment variables whose names look secret (`*_TOKEN`, `*_KEY`, `*_SECRET`, `*PASSWORD*`,
 *     `*_CREDENTIALS`, …, and the provider keys Pi reads), NAME being the variable (actors/redact/env-secrets.ts);
 *   - well-known token shapes (GitHub, OpenAI, Anthropic, Slack, AWS, …, actors/redact/token-shapes.ts) and PEM
 *     private key blocks (actors/redact/private-key.ts), NAME being the shape's lower-case name.
 * This file applies them: it finds each kind in a text, and at its cut ends, and has the finds replaced
 * (actors/redact/spans.ts).
 *
 * Linear time, without V8's experimental linear engine (its flag is process-wide): environment values are found with
 * `indexOf`, PEM blocks with `indexOf` and a line scan, and every shape is a regex that can only start where a run of
 * its token characters starts (a one-character lookbehind) and then reads one character class, so each position of
 * the text is read a bounded number of times however the text is made.
 *
 * Everything found in one text is merged first (overlapping finds become one replacement, named after the one that
 * starts first), so a marker is never itself searched and the count is the number of replacements the reader sees.
 *
 * Cut edges. A secret is only found whole, so text must be redacted once it is assembled (the monitor redacts
 * complete lines, never chunks). Where text is a piece of something longer — a clipped line, a regex capture, a
 * head/tail cut — the caller says which ends are cut, and there the redactor also replaces a partial secret: a
 * prefix of at least 8 characters of an environment secret at a cut end, a suffix of one at a cut start, a piece
 * cut at both ends that lies inside one, and a token shape's prefix with whatever of its body is left at a cut end.
 * What can still pass: fewer than 8 characters of an environment secret at a cut, and the body of a token whose
 * recognisable prefix was cut away (a shape is known by its prefix).
 */
import { MIN_SECRET_LENGTH, needlesOf } from "./env-secrets.ts";
import { PRIVATE_KEY, privateKeySpans } from "./private-key.ts";
import { replaceSpans, type Redacted, type Span } from "./spans.ts";
import { EDGE_WINDOW, SHAPES, secretOf } from "./token-shapes.ts";

/** Which ends of a text are cut edges of a longer output. */
export interface Cut {
  start?: boolean;
  end?: boolean;
}

export interface Redactor {
  redact(text: string, cut?: Cut): Redacted;
  /**
   * Lines that follow one another in an output (a diagnostic tail): redacted as one text, so a PEM block spanning
   * them is found, and each line keeps its place (a replaced line of a block becomes the marker). `cutEnds[i]` marks
   * line i as clipped at its end.
   */
  redactLines(lines: readonly string[], cutEnds?: readonly boolean[]): { lines: string[]; count: number };
}

export function createRedactor(env: Readonly<Record<string, string | undefined>>): Redactor {
  const needles = needlesOf(env);

  const find = (text: string, spans: Span[]): void => {
    if (text.includes(PRIVATE_KEY)) privateKeySpans(text, spans);
    for (const shape of SHAPES) {
      // `includes` runs far faster than any pattern, and most text holds none of the prefixes.
      if (!shape.prefixes.some((prefix) => text.includes(prefix))) continue;
      shape.pattern.lastIndex = 0;
      for (let m = shape.pattern.exec(text); m !== null; m = shape.pattern.exec(text)) {
        const [start, end] = secretOf(m, 0);
        spans.push({ start, end, name: shape.name });
      }
    }
    for (const { value, name } of needles) {
      for (let at = text.indexOf(value); at >= 0; at = text.indexOf(value, at + value.length)) {
        spans.push({ start: at, end: at + value.length, name });
      }
    }
  };

  /** Partial secrets at a cut: `text[from, to)` is one line (or the whole text) whose given ends are cut. */
  const findAtCut = (text: string, from: number, to: number, cut: Cut, spans: Span[]): void => {
    const length = to - from;
    for (const { value, name } of needles) {
      if (cut.start && cut.end && length >= MIN_SECRET_LENGTH && length < value.length && value.includes(text.slice(from, to))) {
        spans.push({ start: from, end: to, name });
        continue;
      }
      if (cut.end) {
        const head = value.slice(0, MIN_SECRET_LENGTH);
        // The earliest start whose rest of the line is a prefix of the value is the longest such prefix.
        // Searched within the last `value.length - 1` characters only, so a cut costs the length of the secret.
        const window = Math.max(from, to - value.length + 1);
        const near = text.slice(window, to);
        for (let i = near.indexOf(head); i >= 0 && i <= near.length - MIN_SECRET_LENGTH; i = near.indexOf(head, i + 1)) {
          if (value.startsWith(near.slice(i))) {
            spans.push({ start: window + i, end: to, name });
            break;
          }
        }
      }
      if (cut.start) {
        const tail = value.slice(-MIN_SECRET_LENGTH);
        const near = text.slice(from, Math.min(to, from + value.length - 1));
        let found = 0;
        for (let i = near.indexOf(tail); i >= 0; i = near.indexOf(tail, i + 1)) {
          if (value.endsWith(near.slice(0, i + MIN_SECRET_LENGTH))) found = i + MIN_SECRET_LENGTH;
        }
        if (found > 0) spans.push({ start: from, end: from + found, name });
      }
    }
    if (cut.end) {
      const windowStart = Math.max(from, to - EDGE_WINDOW);
      const window = text.slice(windowStart, to);
      for (const shape of SHAPES) {
        const m = shape.edge?.exec(window);
        if (m) spans.push({ start: secretOf(m, windowStart)[0], end: to, name: shape.name });
      }
    }
  };

  const redactLines = (lines: readonly string[], cutEnds?: readonly boolean[]): { lines: string[]; count: number } => {
    const text = lines.join("\n");
    const spans: Span[] = [];
    find(text, spans);
    if (cutEnds?.some(Boolean)) {
      let from = 0;
      for (let i = 0; i < lines.length; i++) {
        const to = from + (lines[i] as string).length;
        if (cutEnds[i]) findAtCut(text, from, to, { end: true }, spans);
        from = to + 1;
      }
    }
    if (spans.length === 0) return { lines: [...lines], count: 0 };
    const result = replaceSpans(text, spans);
    const out = result.text.split("\n");
    // Markers hold no newline and a replaced block keeps every one of its newlines, so lines stay in place.
    if (out.length !== lines.length) throw new Error("redaction changed the number of lines");
    return { lines: out, count: result.count };
  };

  return {
    redact(text, cut) {
      const spans: Span[] = [];
      find(text, spans);
      if (cut?.start || cut?.end) findAtCut(text, 0, text.length, cut, spans);
      return spans.length === 0 ? { text, count: 0 } : replaceSpans(text, spans);
    },
    redactLines,
  };
}
