/**
 * The part of Pi's theme the renderers use: semantic roles only, so the user's colours apply. Pi's `Theme` satisfies
 * this interface; tests can pass a plain one.
 */
export type FgRole =
  | "accent"
  | "border"
  | "success"
  | "error"
  | "warning"
  | "muted"
  | "dim"
  | "text"
  | "toolTitle"
  | "toolOutput";

export type BgRole = "selectedBg" | "toolPendingBg" | "toolSuccessBg" | "toolErrorBg" | "customMessageBg";

export interface UiTheme {
  fg(role: FgRole, text: string): string;
  bg(role: BgRole, text: string): string;
  bold(text: string): string;
}

/** A theme that adds no styling (for width arithmetic and tests). */
export const PLAIN_THEME: UiTheme = {
  fg: (_role, text) => text,
  bg: (_role, text) => text,
  bold: (text) => text,
};
