/**
 * Well-known token shapes (GitHub, OpenAI, Anthropic, Slack, AWS, …) the redactor (actors/redact/redactor.ts) replaces
 * wherever they occur, each named by its lower-case name, with the edge form that catches one cut short. Apart from
 * the redactor because the list grows with the providers while how a find is replaced does not, and every shape here
 * must keep the form (below) that keeps the backtracking engine linear.
 */

export interface Shape {
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

export const SHAPES: readonly Shape[] = [
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
export function secretOf(m: RegExpExecArray, offset: number): [number, number] {
  const group = m.indices?.groups?.secret;
  if (group !== undefined) return [offset + group[0], offset + group[1]];
  return [offset + m.index, offset + m.index + m[0].length];
}

/** How far back from a cut end a token shape is looked for. */
export const EDGE_WINDOW = 512;
