/**
 * What the redactor found, and how it is written out: a found secret is a span of the text with the name its marker
 * carries, and the spans of one text are merged and replaced together. Apart from the finders (env-secrets.ts,
 * token-shapes.ts, private-key.ts), which only add spans, so that every finder's output is replaced by one rule.
 */

/** A secret found in a text: `[start, end)`, named `name` in its marker. */
export interface Span {
  start: number;
  end: number;
  name: string;
}

/** A text with its secrets replaced. */
export interface Redacted {
  text: string;
  /** Replacements made. */
  count: number;
}

export function marker(name: string): string {
  return `[redacted:${name}]`;
}

/** Merges overlapping spans (the first to start names the union) and writes one marker per merged span. */
export function replaceSpans(text: string, spans: Span[]): Redacted {
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  let out = "";
  let at = 0;
  let count = 0;
  let current: Span | null = null;
  const flush = (span: Span): void => {
    out += text.slice(at, span.start) + mask(text.slice(span.start, span.end), span.name);
    at = span.end;
    count++;
  };
  for (const span of spans) {
    if (current !== null && span.start < current.end) {
      if (span.end > current.end) current.end = span.end;
      continue;
    }
    if (current !== null) flush(current);
    current = span;
  }
  if (current !== null) flush(current);
  return { text: out + text.slice(at), count };
}

/** One marker per line of the secret, so a block spanning lines keeps them. */
function mask(secret: string, name: string): string {
  if (!secret.includes("\n")) return marker(name);
  return secret
    .split("\n")
    .map((line) => (line === "" ? "" : marker(name)))
    .join("\n");
}
