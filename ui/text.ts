/**
 * Terminal-column arithmetic for the renderers. Widths are always measured in cells with pi-tui's own functions, so
 * wide characters, combining marks and theme colours are counted the way the terminal draws them.
 */
import { truncateToWidth, visibleWidth, wrapTextWithAnsi } from "@earendil-works/pi-tui";

export { visibleWidth };

/** Cuts a (styled) line to `width` cells with an ellipsis. */
export function fit(line: string, width: number): string {
  if (width <= 0) return "";
  return visibleWidth(line) <= width ? line : truncateToWidth(line, width, "…");
}

/** Cuts or pads a (styled) line to exactly `width` cells. */
export function fill(line: string, width: number): string {
  const cut = fit(line, width);
  const gap = width - visibleWidth(cut);
  return gap > 0 ? cut + " ".repeat(gap) : cut;
}

/** Wraps a (styled) line into lines of at most `width` cells; never returns an empty list. */
export function wrap(line: string, width: number): string[] {
  if (width <= 0) return [""];
  const lines = wrapTextWithAnsi(line, width).map((l) => fit(l, width));
  return lines.length > 0 ? lines : [""];
}

/** Number of Unicode code points (what the 160-point preview bound counts). */
export function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

/** The first `limit` code points of `text`. */
export function headPoints(text: string, limit: number): string {
  let out = "";
  let count = 0;
  for (const char of text) {
    if (count >= limit) break;
    out += char;
    count += 1;
  }
  return out;
}
