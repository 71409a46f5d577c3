/**
 * A pattern compiled the way both the actor and the regex sandbox run it, with its prefilter.
 *
 * The linear engine pays a fixed cost of a few hundred nanoseconds per `exec`, even on a short line that cannot
 * match. Most output lines cannot match a sentinel, so each pattern first gets a prefilter: a plain substring test for
 * the literal every match must begin with. It changes no verdict and leaves the worst case linear.
 */
import type { RawMatch } from "./raw-match.ts";

/** A cheap necessary condition for a pattern to match a line: false means it cannot. */
export type Prefilter = (text: string) => boolean;

const META = new Set(["\\", "^", "$", ".", "|", "?", "*", "+", "(", ")", "[", "]", "{", "}"]);
const QUANTIFIER = new Set(["?", "*", "+", "{"]);

/**
 * The literal every match of `source` must begin with, read from the start of the pattern, and whether the match
 * is anchored at the start of the line. Plain groups are transparent (`(?<json>\{.*\})` begins with "{"), and
 * anything that could make a character optional ends the literal before it. Conservative: a pattern with any `|`
 * has none (an alternative could begin differently), an escape counts only for punctuation (`\{`, `\.`), and a
 * lookaround ends the literal.
 */
export function requiredPrefix(source: string): { literal: string; anchored: boolean } | null {
  if (source.includes("|")) return null;
  const anchored = source.startsWith("^");
  let at = anchored ? 1 : 0;
  let literal = "";
  /** Where the last atom (a character or a whole group) begins in `literal`: a quantifier cuts it off. */
  let atomStart = 0;
  /** `literal.length` at each group still open. */
  const open: number[] = [];
  while (at < source.length) {
    const char = source[at] as string;
    if (char === "\\") {
      const next = source[at + 1];
      if (next === undefined || /[0-9A-Za-z]/.test(next) || next.charCodeAt(0) > 0x7e) break;
      atomStart = literal.length;
      literal += next;
      at += 2;
    } else if (char === "(") {
      if (source.startsWith("(?:", at)) at += 3;
      else if (source.startsWith("(?<", at) && source[at + 3] !== "=" && source[at + 3] !== "!") {
        const close = source.indexOf(">", at);
        if (close < 0) break;
        at = close + 1;
      } else if (source[at + 1] === "?") break;
      else at += 1;
      open.push(literal.length);
      continue;
    } else if (char === ")") {
      const groupStart = open.pop();
      if (groupStart === undefined) break;
      atomStart = groupStart;
      at += 1;
    } else if (META.has(char)) {
      break;
    } else {
      atomStart = literal.length;
      literal += char;
      at += 1;
    }
    // `ab*` requires only "a", `(ab)?c` nothing: a quantified atom is optional or repeats.
    if (at < source.length && QUANTIFIER.has(source[at] as string)) {
      literal = literal.slice(0, atomStart);
      break;
    }
  }
  // Stopped inside groups: what was read in them is certain only if none of them turns out optional (`(ab\d)?c`).
  if (open.length > 0) {
    const quantified = quantifiedGroups(source, at, open.length);
    const cut = quantified === null ? 0 : quantified.indexOf(true);
    if (cut >= 0) literal = literal.slice(0, open[cut]);
  }
  return literal === "" ? null : { literal, anchored };
}

/**
 * Reading on from `at`, inside `depth` open groups: for each of them, outermost first, whether a quantifier follows
 * its closing parenthesis. Null when the pattern does not close them all.
 */
function quantifiedGroups(source: string, at: number, depth: number): boolean[] | null {
  const quantified = new Array<boolean>(depth).fill(false);
  let level = depth;
  let nested = 0;
  while (at < source.length && level > 0) {
    const char = source[at] as string;
    if (char === "\\") {
      at += 2;
    } else if (char === "[") {
      // A class ends at its first unescaped "]" (an empty class `[]` included); parentheses in it are literal.
      at += source[at + 1] === "^" ? 2 : 1;
      while (at < source.length && source[at] !== "]") at += source[at] === "\\" ? 2 : 1;
      at += 1;
    } else if (char === "(") {
      nested++;
      at += 1;
    } else if (char === ")") {
      at += 1;
      if (nested > 0) {
        nested--;
      } else {
        level--;
        quantified[level] = at < source.length && QUANTIFIER.has(source[at] as string);
      }
    } else {
      at += 1;
    }
  }
  return level === 0 ? quantified : null;
}

export function prefilterOf(source: string): Prefilter | null {
  const prefix = requiredPrefix(source);
  if (prefix === null) return null;
  const { literal, anchored } = prefix;
  return anchored ? (text) => text.startsWith(literal) : (text) => text.includes(literal);
}

/** A compiled pattern with its prefilter: the regex runs only on lines the prefilter lets through. */
export interface Pattern {
  regex: RegExp;
  prefilter: Prefilter | null;
}

/** A compiled regex with the prefilter of its source. */
export function pattern(source: string, regex: RegExp): Pattern {
  return { regex, prefilter: prefilterOf(source) };
}

function run(pattern: Pattern, text: string): RegExpExecArray | null {
  if (pattern.prefilter !== null && !pattern.prefilter(text)) return null;
  return pattern.regex.exec(text);
}

/**
 * One line against the contract: the failure pattern first, because on one line a failure beats a success.
 * `wantSuccess` false skips the success pattern (the contract no longer cares). Allocates only on a match.
 */
export function matchLine(result: Pattern, failure: Pattern | null, text: string, wantSuccess: boolean): RawMatch | null {
  if (failure !== null) {
    const found = run(failure, text);
    if (found !== null) return { kind: "failure", text: found[0], groups: found.groups ?? null };
  }
  if (!wantSuccess) return null;
  const found = run(result, text);
  return found === null ? null : { kind: "success", text: found[0], groups: found.groups ?? null };
}

/** Compiles a pattern the way both the actor and the sandbox run it. */
export function compilePattern(source: string, flags: "" | "l"): Pattern {
  return pattern(source, new RegExp(source, flags));
}
