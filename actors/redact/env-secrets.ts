/**
 * The environment's secrets: which variable names look secret, and the values of those variables the redactor
 * (actors/redact/redactor.ts) searches for. Apart from the redactor because the rule for a name is policy (a unit
 * test checks it against pi-ai's provider table), while finding and replacing is mechanism.
 */

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

/** A secret value to look for, and the variable it is named after. */
export interface Needle {
  value: string;
  name: string;
}

/** The environment's secret values, longest first so that a value containing another is named after itself. */
export function needlesOf(env: Readonly<Record<string, string | undefined>>): Needle[] {
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
