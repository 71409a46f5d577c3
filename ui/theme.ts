/**
 * The part of Pi's theme the renderers use: semantic roles only, so the user's colours apply. Pi's `Theme` satisfies
 * this interface; tests pass one that adds no styling (tests/fixtures/plain-theme.ts).
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
