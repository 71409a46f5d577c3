/**
 * A UI host for SDK sessions that only listens: the methods a test hands in answer (a `notify` that records, say),
 * every other UI call does nothing and answers nothing, as no user is there to answer.
 */
import type { ExtensionUIContext } from "@earendil-works/pi-coding-agent";

export function quietUi(overrides: Partial<ExtensionUIContext>): ExtensionUIContext {
  const quiet = (): void => undefined;
  const nothing = async (): Promise<undefined> => undefined;
  const base: Omit<ExtensionUIContext, "theme"> = {
    select: nothing,
    confirm: async () => false,
    input: nothing,
    editor: nothing,
    custom: nothing as ExtensionUIContext["custom"],
    notify: quiet,
    onTerminalInput: () => quiet,
    setStatus: quiet,
    setWorkingMessage: quiet,
    setWorkingVisible: quiet,
    setWorkingIndicator: quiet,
    setHiddenThinkingLabel: quiet,
    setWidget: quiet,
    setFooter: quiet,
    setHeader: quiet,
    setTitle: quiet,
    pasteToEditor: quiet,
    setEditorText: quiet,
    getEditorText: () => "",
    addAutocompleteProvider: quiet,
    setEditorComponent: quiet,
    getEditorComponent: () => undefined,
    getAllThemes: () => [],
    getTheme: () => undefined,
    setTheme: () => ({ success: false, error: "no UI" }),
    getToolsExpanded: () => false,
    setToolsExpanded: quiet,
  };
  // No theme: nothing under test draws, and a theme exists only once a TUI has set one up. Pi copies the UI
  // object's own properties, so every method is an own property here.
  return { ...base, ...overrides } as ExtensionUIContext;
}
