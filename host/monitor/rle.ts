/**
 * rle-v1: the optional lossless encoding of a report's payload lines (`compact=true`).
 *
 * A payload is encoded as a JSON array whose parts are joined in order: a string is literal text, and a
 * `[text, count]` pair stands for `text` repeated `count` times. A model (or a codemode script) decodes it with
 * JSON.parse and String.repeat alone, and the result is exactly the payload text the default report would carry.
 * Only repetition is exploited: high-entropy payloads gain nothing, and then the default text is kept.
 */
import { escapeJson } from "../safety/escape.ts";

export type RlePart = string | [text: string, count: number];

export const RLE_ENCODING_LINE = "payload_encoding=rle-v1 (join parts; [s,n] means s repeated n times)";
export const RLE_PAYLOAD_KEY = "payload_rle=";

/** Longest repeated unit looked for, in code points: enough for a JSON record in an array. */
const MAX_PERIOD = 128;
/** A repeat is only worth a `[text,count]` pair when it saves at least this many characters of JSON. */
const MIN_PAIR_GAIN = 24;
/** The encoded lines must save this many characters and halve the payload; small wins cost the model a decode. */
const MIN_SAVING = 256;

/** Characters a code point costs inside a JSON string as escapeJson writes it. */
function jsonCost(point: string): number {
  if (point.length === 2) return 2;
  const code = point.charCodeAt(0);
  if (point === '"' || point === "\\") return 2;
  if (code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d) return 2;
  if (code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029) return 6;
  if (code >= 0xd800 && code <= 0xdfff) return 6; // a lone surrogate
  return 1;
}

export function encodeRle(text: string): RlePart[] {
  // Code points, so that a repeated unit never splits a surrogate pair.
  const points = Array.from(text);
  const n = points.length;
  const prefixCost = new Array<number>(n + 1);
  prefixCost[0] = 0;
  for (let k = 0; k < n; k += 1) prefixCost[k + 1] = (prefixCost[k] as number) + jsonCost(points[k] as string);

  const parts: RlePart[] = [];
  let literalStart = 0;
  let i = 0;
  while (i < n) {
    let bestPeriod = 0;
    let bestCount = 0;
    let bestGain = MIN_PAIR_GAIN - 1;
    for (let period = 1; period <= MAX_PERIOD && i + 2 * period <= n; period += 1) {
      let j = i;
      while (j + period < n && points[j] === points[j + period]) j += 1;
      const count = Math.floor((j - i) / period) + 1;
      if (count < 2) continue;
      const unitCost = (prefixCost[i + period] as number) - (prefixCost[i] as number);
      // The pair replaces count units by one unit plus `["",count],` framing and a split of the literal around it.
      const gain = (count - 1) * unitCost - (String(count).length + 8);
      if (gain > bestGain) {
        bestGain = gain;
        bestPeriod = period;
        bestCount = count;
      }
    }
    if (bestCount === 0) {
      i += 1;
      continue;
    }
    if (literalStart < i) parts.push(points.slice(literalStart, i).join(""));
    parts.push([points.slice(i, i + bestPeriod).join(""), bestCount]);
    i += bestPeriod * bestCount;
    literalStart = i;
  }
  if (literalStart < n) parts.push(points.slice(literalStart).join(""));
  return parts;
}

/**
 * The two lines that replace `payload` (its lines joined by "\n") in a compact report, or null when encoding
 * would not make the report materially smaller.
 */
export function compactPayloadLines(payload: string): [string, string] | null {
  const parts = encodeRle(payload);
  if (parts.every((part) => typeof part === "string")) return null;
  const lines: [string, string] = [RLE_ENCODING_LINE, `${RLE_PAYLOAD_KEY}${escapeJson(parts)}`];
  const encodedLength = lines[0].length + 1 + lines[1].length;
  if (encodedLength * 2 > payload.length || payload.length - encodedLength < MIN_SAVING) return null;
  return lines;
}
