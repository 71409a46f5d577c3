/**
 * Key handling shared by the console and the picker: configurable list movement goes through Pi's keybindings
 * (so a user's remapped Up/Down/PageUp work), fixed letters are matched as keys.
 */
import { matchesKey } from "@earendil-works/pi-tui";
import type { ConsoleAction } from "./console-state.ts";

/** The slice of Pi's KeybindingsManager the components need. */
export interface KeyMatcher {
  matches(data: string, keybinding: string): boolean;
}

/** A key of the console: a pure state action, or one the component itself handles. */
export type ConsoleKey = ConsoleAction | "stop" | "stopAll" | "close";

export function consoleKey(data: string, keys: KeyMatcher): ConsoleKey | null {
  if (matchesKey(data, "q") || matchesKey(data, "escape") || keys.matches(data, "tui.select.cancel")) return "close";
  if (keys.matches(data, "tui.select.up") || matchesKey(data, "up")) return "up";
  if (keys.matches(data, "tui.select.down") || matchesKey(data, "down")) return "down";
  if (keys.matches(data, "tui.select.pageUp") || matchesKey(data, "pageUp")) return "pageUp";
  if (keys.matches(data, "tui.select.pageDown") || matchesKey(data, "pageDown")) return "pageDown";
  if (matchesKey(data, "home")) return "home";
  if (matchesKey(data, "end")) return "end";
  if (keys.matches(data, "tui.select.confirm") || matchesKey(data, "enter")) return "toggleOutput";
  if (matchesKey(data, "v")) return "toggleValues";
  if (matchesKey(data, "?") || data === "?") return "toggleHelp";
  if (matchesKey(data, "x")) return "stop";
  if (matchesKey(data, "a")) return "stopAll";
  return null;
}
