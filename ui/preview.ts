/**
 * Value previews for human presentation: a value longer than 160 code points shows its first 160 and says how long
 * the original (sanitized) text is. Only what is drawn changes; reports, structured results and stored details keep
 * the complete values.
 */
import { codePoints, headPoints } from "./text.ts";

export const PREVIEW_CODE_POINTS = 160;

export type Preview = { kind: "complete"; text: string } | { kind: "preview"; text: string; originalLength: number };

export function previewValue(text: string, limit = PREVIEW_CODE_POINTS): Preview {
  const length = codePoints(text);
  if (length <= limit) return { kind: "complete", text };
  return { kind: "preview", text: headPoints(text, limit), originalLength: length };
}
