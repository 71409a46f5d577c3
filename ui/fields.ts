/**
 * Draws labelled fields as `Label: value` lines within a width. Every value is sanitized first; a value that needed
 * visible escapes says so in its label. Long previewable values show their first 160 code points and the original
 * length unless complete values are asked for. A command is sanitized before it reaches the highlighter, so its text
 * can never become terminal control data.
 */
import type { DetailField } from "./views.ts";
import { previewValue } from "./preview.ts";
import { sanitizeBlock, sanitizeInline } from "../shared/sanitize.ts";
import { fit, wrap } from "./text.ts";
import type { UiTheme } from "./theme.ts";

/** Shell syntax highlighting (Pi's highlightCode under the active theme); lines in, styled lines out. */
export type Highlighter = (code: string) => string[];

export interface FieldRenderOptions {
  width: number;
  theme: UiTheme;
  /** Show complete values instead of previews. */
  fullValues: boolean;
  /** Where complete values can be seen, appended to a preview note (e.g. "/monitor: v full values"). */
  previewHint?: string;
  highlight?: Highlighter;
  /** Indent of value lines under a block label. */
  indent?: number;
}

const ESCAPED = " (escaped controls)";

function label(text: string, escaped: boolean, theme: UiTheme): string {
  // Labels can carry data too (capture names come from the model's pattern).
  const clean = sanitizeInline(text);
  return theme.fg("muted", `${clean.text}${escaped || clean.escaped ? ESCAPED : ""}:`);
}

function renderInline(field: DetailField, options: FieldRenderOptions): string[] {
  const { theme, width } = options;
  const clean = sanitizeInline(field.value);
  let value = clean.text;
  let note: string | null = null;
  if (field.previewable === true && !options.fullValues) {
    const preview = previewValue(value);
    if (preview.kind === "preview") {
      value = `${preview.text}…`;
      const hint = options.previewHint ? ` · ${options.previewHint}` : "";
      note = `preview of ${preview.originalLength.toLocaleString("en-US")} characters${hint}`;
    }
  }
  if (field.tone === "warning") value = theme.fg("warning", value);
  const lines = wrap(`${label(field.label, clean.escaped, theme)} ${value}`, width);
  if (note !== null) lines.push(...wrap(theme.fg("dim", `(${note})`), width));
  return lines;
}

function renderBlock(field: DetailField, options: FieldRenderOptions): string[] {
  const { theme, width } = options;
  const pad = " ".repeat(Math.min(options.indent ?? 2, Math.max(0, width - 1)));
  const inner = Math.max(1, width - pad.length);
  const clean = sanitizeBlock(field.value);
  const lines = [fit(label(field.label, clean.escaped, theme), width)];
  const body =
    field.layout === "code" && options.highlight !== undefined
      ? safeHighlight(clean.lines.join("\n"), options.highlight, clean.lines)
      : clean.lines.map((line) => theme.fg("toolOutput", line));
  for (const line of body) for (const part of wrap(line, inner)) lines.push(pad + part);
  return lines;
}

function safeHighlight(code: string, highlight: Highlighter, fallback: string[]): string[] {
  try {
    const lines = highlight(code);
    return lines.length > 0 ? lines : fallback;
  } catch {
    return fallback;
  }
}

export function renderField(field: DetailField, options: FieldRenderOptions): string[] {
  return field.layout === "inline" ? renderInline(field, options) : renderBlock(field, options);
}

export function renderFields(fields: readonly DetailField[], options: FieldRenderOptions): string[] {
  const lines: string[] = [];
  for (const field of fields) lines.push(...renderField(field, options));
  return lines;
}
