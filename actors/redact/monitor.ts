/**
 * Redaction applied to what a monitor's outcome carries. Pure, and run in the actor: the engine redacts each match
 * before the contract bounds it (so a clip can cut a marker, never a secret) and the diagnostic tail once, when the
 * outcome is built. Nothing here runs per output line.
 */
import type { DiagnosticLine } from "../../mailbox/monitor.ts";
import type { RawMatch } from "../match/raw-match.ts";
import type { Redactor } from "./redactor.ts";

/**
 * `match` with its secrets replaced. The whole match and every group are pieces of a line, cut at both ends, so a
 * partial secret at either end is caught too. The `json` group is redacted as text (a marker is valid inside a JSON
 * string) and then, parsed, in every string it decodes to: a secret written with escapes is only visible there, and
 * when one is found the group becomes the redacted value serialised again.
 */
export function redactMatch(redactor: Redactor, match: RawMatch): RawMatch {
  const cut = { start: true, end: true };
  const text = redactor.redact(match.text, cut);
  let count = text.count;
  let captures = false;
  let groups = match.groups;
  if (groups !== null) {
    const redacted: Record<string, string | undefined> = {};
    for (const name of Object.keys(groups)) {
      const value = groups[name];
      if (value === undefined) {
        redacted[name] = undefined;
        continue;
      }
      const result = name === "json" ? redactJson(redactor, value) : redactor.redact(value, cut);
      if (result.count > 0) captures = true;
      count += result.count;
      redacted[name] = result.text;
    }
    // A group named `__proto__` must stay an own property, as the matcher made it.
    groups = Object.fromEntries(Object.entries(redacted));
  }
  if (count === 0) return match;
  return { ...match, text: text.text, groups, redaction: { count, captures } };
}

function redactJson(redactor: Redactor, raw: string): { text: string; count: number } {
  const asText = redactor.redact(raw, { start: true, end: true });
  let decoded = 0;
  let value: unknown;
  try {
    value = JSON.parse(asText.text, (_key: string, item: unknown) => {
      if (typeof item === "string") {
        const result = redactor.redact(item);
        decoded += result.count;
        return result.text;
      }
      if (item !== null && typeof item === "object" && !Array.isArray(item)) {
        // Keys are strings the model reads too.
        const entries = Object.entries(item);
        const keys = new Set(entries.map(([key]) => key));
        let renamed = false;
        const next = entries.map(([key, field]): [string, unknown] => {
          const result = redactor.redact(key);
          if (result.count === 0) return [key, field];
          decoded += result.count;
          renamed = true;
          // Two keys redacted alike must not collapse into one: the second gets a number.
          let unique = result.text;
          for (let n = 2; keys.has(unique); n++) unique = `${result.text}#${n}`;
          keys.add(unique);
          return [unique, field];
        });
        return renamed ? Object.fromEntries(next) : item;
      }
      return item;
    });
  } catch {
    // Not JSON (the contract reports that), or too deep to revive: the text form is what is reported.
    return asText;
  }
  if (decoded === 0) return asText;
  return { text: JSON.stringify(value), count: asText.count + decoded };
}

/** The tail's lines redacted as one text (a PEM block can span them), a clipped line being cut at its end. */
export function redactTail(redactor: Redactor, lines: readonly DiagnosticLine[]): { lines: DiagnosticLine[]; count: number } {
  const result = redactor.redactLines(
    lines.map((line) => line.text),
    lines.map((line) => line.clipped),
  );
  if (result.count === 0) return { lines: [...lines], count: 0 };
  return { lines: lines.map((line, i) => ({ ...line, text: result.lines[i] as string })), count: result.count };
}
