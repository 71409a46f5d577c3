/**
 * Secrets out of what a job shows the model and the screen. Pure: a redactor is built from a job's effective
 * environment (once per thread for the jobs that inherit the thread's, actors/job/actor.ts) and then replaces, in
 * any text it is given, each secret with `[redacted:NAME]`:
 *   - the values of environment variables whose names look secret (`*_TOKEN`, `*_KEY`, `*_SECRET`, `*PASSWORD*`,
 *     `*_CREDENTIALS`, …, and the provider keys Pi reads), NAME being the variable;
 *   - well-known token shapes (GitHub, OpenAI, Anthropic, Slack, AWS, …, PEM private key blocks), NAME being the
 *     shape's lower-case name.
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

export interface Redacted {
  text: string;
  /** Replacements made. */
  count: number;
}

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

/** Shorter environment values are too likely to occur by chance to be replaced everywhere. */
export const MIN_SECRET_LENGTH = 8;

/**
 * Provider credentials Pi reads from the environment (pi-ai's env-api-keys) whose names the suffix rules below do not
 * already cover. The worker cannot import Pi, so they are listed here; a unit test checks the list against pi-ai.
 */
export const PROVIDER_SECRET_NAMES: readonly string[] = ["AWS_ACCESS_KEY_ID", "AWS_BEARER_TOKEN_BEDROCK"];

const SECRET_SUFFIXES = ["_TOKEN", "_KEY", "_SECRET", "_CREDENTIALS", "_PASSWD", "_PAT"];

export function isSecretName(name: string): boolean {
  const upper = name.toUpperCase();
  return (
    upper.includes("PASSWORD") ||
    SECRET_SUFFIXES.some((suffix) => upper.endsWith(suffix)) ||
    PROVIDER_SECRET_NAMES.includes(upper)
  );
}

export function marker(name: string): string {
  return `[redacted:${name}]`;
}

interface Span {
  start: number;
  end: number;
  name: string;
}

interface Shape {
  name: string;
  /** The literals a match starts with: a text that holds none of them is not searched. */
  prefixes: readonly string[];
  /** Global; matches a whole token, or with a `secret` group, the part of the match that is secret. */
  pattern: RegExp;
  /** The shape's prefix and what is left of its body, ending at the end of the text: a token cut short. */
  edge: RegExp | null;
}

// A pattern starts either with a lookbehind for a character of its own token class, so it can only start where a run
// of such characters starts, or with a literal; its body is one greedy class (bounded where another part follows).
// Each position is then read a bounded number of times: the backtracking engine stays linear.

/** Token characters: a token starts only where a run of them starts. */
const WORD = "[A-Za-z0-9_]";
const WORD_DASH = "[A-Za-z0-9_-]";

/**
 * A token that is a head (beginning with one of `prefixes`) and a body of `body` characters, `count` of them (a
 * quantifier), starting where a run of `run` characters starts. Its edge form is the head with whatever of the body
 * is left at a cut end.
 */
function token(name: string, prefixes: readonly string[], form: { run: string; head: string; body: string; count: string }): Shape {
  const headAndBody = `(?<!${form.run})${form.head}${form.body}`;
  return { name, prefixes, pattern: new RegExp(`${headAndBody}${form.count}`, "g"), edge: new RegExp(`${headAndBody}+$`) };
}

const SHAPES: readonly Shape[] = [
  token("github_token", ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"], { run: WORD, head: "gh[pousr]_", body: "[A-Za-z0-9]", count: "{36,}" }),
  token("github_pat", ["github_pat_"], { run: WORD, head: "github_pat_", body: WORD, count: "{22,}" }),
  token("gitlab_token", ["glpat-"], { run: WORD_DASH, head: "glpat-", body: WORD_DASH, count: "{20,}" }),
  token("anthropic_key", ["sk-ant-"], { run: WORD_DASH, head: "sk-ant-", body: WORD_DASH, count: "{20,}" }),
  // Project, service-account and admin keys carry hyphens and underscores in their body.
  token("openai_key", ["sk-proj-", "sk-svcacct-", "sk-admin-"], {
    run: WORD_DASH,
    head: "sk-(?:proj|svcacct|admin)-",
    body: WORD_DASH,
    count: "{20,}",
  }),
  {
    // Legacy OpenAI keys and the providers that copied the form (DeepSeek, Moonshot, OpenRouter's sk-or-v1-…). No
    // hyphen in the body past that first segment, so a long kebab-case name starting with "sk-" is not a key.
    name: "sk_key",
    prefixes: ["sk-"],
    pattern: /(?<![A-Za-z0-9_-])sk-(?!ant-|proj-|svcacct-|admin-)(?:[a-z]{2}-v[0-9]-)?[A-Za-z0-9]{32,}/g,
    edge: null,
  },
  token("slack_token", ["xox"], { run: WORD_DASH, head: "xox[abposre]-", body: "[A-Za-z0-9-]", count: "{10,}" }),
  {
    // An access key id alone grants nothing, so a cut one is not worth an edge form.
    name: "aws_access_key_id",
    prefixes: ["AKIA", "ASIA"],
    pattern: /(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])/g,
    edge: null,
  },
  token("google_api_key", ["AIza"], { run: WORD_DASH, head: "AIza", body: WORD_DASH, count: "{35}" }),
  token("stripe_key", ["sk_live_", "sk_test_", "rk_live_", "rk_test_"], {
    run: WORD,
    head: "[sr]k_(?:live|test)_",
    body: "[A-Za-z0-9]",
    count: "{24,}",
  }),
  token("npm_token", ["npm_"], { run: WORD, head: "npm_", body: "[A-Za-z0-9]", count: "{36,}" }),
  token("pypi_token", ["pypi-AgE"], { run: WORD_DASH, head: "pypi-AgE", body: WORD_DASH, count: "{50,}" }),
  {
    // header.payload.signature; a JWT cut before its signature gives nothing away, so it has no edge form.
    name: "jwt",
    prefixes: ["eyJ"],
    pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{10,}/g,
    edge: null,
  },
  {
    // An `Authorization: Bearer …` header, as `curl -v` prints it.
    name: "bearer_token",
    prefixes: ["Bearer ", "bearer "],
    pattern: /[Bb]earer (?<secret>[A-Za-z0-9._~+/-]{20,}=*)/dg,
    edge: /[Bb]earer (?<secret>[A-Za-z0-9._~+/-]+=*)$/d,
  },
  {
    // `scheme://user:password@host`: only the password.
    name: "url_password",
    prefixes: ["://"],
    pattern: /:\/\/[^\s/:@]{0,64}:(?<secret>[^\s/@]{1,256})@/dg,
    edge: null,
  },
];

/** Where the secret of a shape's match lies: its `secret` group, else the whole match. */
function secretOf(m: RegExpExecArray, offset: number): [number, number] {
  const group = m.indices?.groups?.secret;
  if (group !== undefined) return [offset + group[0], offset + group[1]];
  return [offset + m.index, offset + m.index + m[0].length];
}

/** How far back from a cut end a token shape is looked for. */
const EDGE_WINDOW = 512;

const PRIVATE_KEY = "PRIVATE KEY";
const PRIVATE_KEY_NAME = "private_key";
const BEGIN = "-----BEGIN ";
const END = "-----END ";

interface Needle {
  value: string;
  name: string;
}

/** The environment's secret values, longest first so that a value containing another is named after itself. */
function needlesOf(env: Readonly<Record<string, string | undefined>>): Needle[] {
  const byValue = new Map<string, string>();
  for (const name of Object.keys(env).sort()) {
    const value = env[name];
    if (value === undefined || !isSecretName(name)) continue;
    // A multi-line value (a PEM key in a variable) is printed line by line: each line is a secret of its own.
    for (const line of value.split(/\r\n|\r|\n/)) {
      const piece = line.trim();
      if (piece.length < MIN_SECRET_LENGTH) continue;
      if (!byValue.has(piece)) byValue.set(piece, name);
      // The same value as a JSON string shows quotes and backslashes escaped.
      const escaped = JSON.stringify(piece).slice(1, -1);
      if (escaped !== piece && !byValue.has(escaped)) byValue.set(escaped, name);
    }
  }
  return [...byValue].map(([value, name]) => ({ value, name })).sort((a, b) => b.value.length - a.value.length);
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
    const result = replace(text, spans);
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
      return spans.length === 0 ? { text, count: 0 } : replace(text, spans);
    },
    redactLines,
  };
}

/** Merges overlapping spans (the first to start names the union) and writes one marker per merged span. */
function replace(text: string, spans: Span[]): Redacted {
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

// ── PEM private key blocks ──────────────────────────────────────────────────────────────────────────────────────

/**
 * `-----BEGIN … PRIVATE KEY-----` through its `-----END … PRIVATE KEY-----`. A block whose END is missing (the output
 * was cut) runs over every following line that can belong to a key; one whose BEGIN is missing (a tail that evicted
 * it) runs back over the key lines before its END. A block on one line (a key printed with `\n` escapes, in JSON for
 * instance) ends at its END marker. Every search below moves forward only (or back over lines it then covers), so
 * the scan stays linear however many markers the text holds.
 */
function privateKeySpans(text: string, spans: Span[]): void {
  let covered = 0;
  let lineEnd = -1;
  /** The first END marker at or after the latest BEGIN; -1 once there is none left; null before the first search. */
  let endMarker: number | null = null;
  for (let at = text.indexOf(PRIVATE_KEY); at >= 0; at = text.indexOf(PRIVATE_KEY, Math.max(at + 1, covered))) {
    if (lineEnd < at) lineEnd = endOfLine(text, at);
    const begin = labelStart(text, at, BEGIN);
    if (begin >= 0) {
      if (endMarker === null || (endMarker >= 0 && endMarker < at)) endMarker = text.indexOf(END, at);
      const oneLine = endMarker >= 0 && endMarker < lineEnd ? closingLabel(text, endMarker, lineEnd) : -1;
      const end = oneLine >= 0 ? oneLine : blockEnd(text, lineEnd);
      spans.push({ start: begin, end, name: PRIVATE_KEY_NAME });
      covered = end;
      continue;
    }
    const closing = labelStart(text, at, END);
    if (closing < 0) continue;
    // Its BEGIN is not in this text: take the key lines just before it, back to what is already covered.
    let start = closing;
    if (closing === 0 || text.charCodeAt(closing - 1) === NEWLINE) {
      for (let prevEnd = closing - 1; prevEnd > covered; ) {
        const prevStart = text.lastIndexOf("\n", prevEnd - 1) + 1;
        if (prevStart < covered || prevStart === prevEnd || !keyLine(text, prevStart, prevEnd)) break;
        start = prevStart;
        prevEnd = prevStart - 1;
      }
    }
    const end = headerEnd(text, at + PRIVATE_KEY.length, lineEnd);
    spans.push({ start, end, name: PRIVATE_KEY_NAME });
    covered = end;
  }
}

const NEWLINE = 0x0a;
/** Longest label between `-----BEGIN ` and `PRIVATE KEY` (`ENCRYPTED`, `OPENSSH`, `PGP`, …), with room to spare. */
const MAX_LABEL = 40;

function endOfLine(text: string, from: number): number {
  const newline = text.indexOf("\n", from);
  return newline < 0 ? text.length : newline;
}

/** Where `prefix` followed by an upper-case label ends right at `at` (the `PRIVATE KEY` found), or -1. */
function labelStart(text: string, at: number, prefix: string): number {
  const from = Math.max(0, at - prefix.length - MAX_LABEL);
  const start = text.slice(from, at).lastIndexOf(prefix);
  if (start < 0) return -1;
  for (let i = from + start + prefix.length; i < at; i++) {
    const code = text.charCodeAt(i);
    if (!((code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code === 32)) return -1;
  }
  return from + start;
}

/** The end of `-----END … PRIVATE KEY-----` starting at `endMarker` on the same line, or -1 when it is another label. */
function closingLabel(text: string, endMarker: number, lineEnd: number): number {
  const window = text.slice(endMarker, Math.min(lineEnd, endMarker + END.length + MAX_LABEL + PRIVATE_KEY.length));
  const label = window.indexOf(PRIVATE_KEY);
  if (label < 0 || labelStart(text, endMarker + label, END) !== endMarker) return -1;
  return headerEnd(text, endMarker + label + PRIVATE_KEY.length, lineEnd);
}

/** The end of a block whose BEGIN line ends at `lineEnd`: its END line, or the last line that can belong to it. */
function blockEnd(text: string, lineEnd: number): number {
  let end = lineEnd;
  while (end < text.length) {
    const next = end + 1;
    const nextEnd = endOfLine(text, next);
    const window = text.slice(next, Math.min(nextEnd, next + END.length + MAX_LABEL + PRIVATE_KEY.length));
    if (window.startsWith(END)) {
      const close = closingLabel(text, next, nextEnd);
      return close >= 0 ? close : end;
    }
    if (!keyLine(text, next, nextEnd)) return end;
    end = nextEnd;
  }
  return end;
}

/** The end of ` BLOCK-----` / `-----` after a label, within the line. */
function headerEnd(text: string, from: number, lineEnd: number): number {
  const dashes = text.slice(from, Math.min(lineEnd, from + 11)).indexOf("-----");
  return dashes >= 0 ? from + dashes + 5 : lineEnd;
}

/** A line that can belong to a PEM body: base64, one of the two headers of a legacy encrypted key, or empty. */
function keyLine(text: string, start: number, end: number): boolean {
  if (text.startsWith("Proc-Type:", start) || text.startsWith("DEK-Info:", start)) return true;
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i);
    const base64 =
      (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || code === 43 || code === 47 || code === 61;
    // CR: output with CRLF line ends.
    if (!base64 && code !== 13) return false;
  }
  return true;
}
