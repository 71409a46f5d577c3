/**
 * The `/metrics` command and the Alt+M shortcut: the summary, `details` in a read-only editor, and the footer's
 * switches (`footer on|off|collapse|expand|toggle`). Apart from the wiring (host/metrics/install.ts), which records
 * and owns the footer, because the command only reads the report and flips the footer's switches.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { FooterSlot } from "./footer-slot.ts";
import { metricsDetails, metricsSummary, type MetricsReport } from "./report.ts";
import { latestResponder } from "./report-model.ts";
import type { FooterModel } from "./views.ts";

const FOOTER_SUBCOMMANDS = ["on", "off", "collapse", "expand", "toggle"] as const;

/** What the command reads from the wiring. */
export interface MetricsCommandSource {
  footer: FooterSlot;
  footerModel: () => FooterModel;
  /** The command runs in this context: the wiring adopts it and refreshes the session's totals. */
  enter: (c: ExtensionContext) => void;
  report: (c: ExtensionContext) => MetricsReport;
}

export function registerMetricsCommand(pi: ExtensionAPI, source: MetricsCommandSource): void {
  const { footer, footerModel } = source;

  const footerCommand = (sub: string, c: ExtensionContext): void => {
    switch (sub) {
      case "on":
        footer.enabled = true;
        footer.claim(c);
        break;
      case "off":
        footer.enabled = false;
        footer.release(c);
        break;
      case "collapse":
        footer.collapsed = true;
        break;
      case "expand":
        footer.collapsed = false;
        break;
      case "toggle":
        footer.collapsed = !footer.collapsed;
        break;
      default:
        c.ui.notify("Usage: /metrics footer on|off|collapse|expand|toggle", "warning");
        return;
    }
    footer.requestRender();
    if (c.mode !== "tui") c.ui.notify("The Metrics footer needs the interactive terminal UI; recording continues.", "info");
  };

  pi.registerCommand("metrics", {
    description: "Metrics summary; `details` shows every value; `footer on|off|collapse|expand|toggle`",
    getArgumentCompletions: (prefix) => {
      const typed = prefix.trim();
      // A complete argument offers nothing more, so Enter submits the command instead of picking a completion.
      const items = ["details", ...FOOTER_SUBCOMMANDS.map((s) => `footer ${s}`)]
        .filter((a) => a.startsWith(typed) && a !== typed)
        .map((value) => ({ value, label: value }));
      return items.length > 0 ? items : null;
    },
    handler: async (args, c) => {
      source.enter(c);
      const words = args.trim().split(/\s+/).filter(Boolean);
      if (words.length === 0) {
        c.ui.notify(metricsSummary(source.report(c)), "info");
      } else if (words[0] === "details" && words.length === 1) {
        const text = metricsDetails(source.report(c), {
          footer: footerModel(),
          allStatuses: footer.statuses().all,
          footerOwned: footer.owned,
          footerEnabled: footer.enabled,
          latestResponder: latestResponder(c),
        });
        // Inspection only: whatever is edited or submitted is discarded and nothing is sent.
        if (c.mode === "tui") await c.ui.editor("Metrics details (edits are discarded)", text);
        else c.ui.notify(text, "info");
      } else if (words[0] === "footer" && words.length === 2) {
        footerCommand(words[1] as string, c);
      } else {
        c.ui.notify("Usage: /metrics [details | footer on|off|collapse|expand|toggle]", "warning");
      }
    },
  });

  pi.registerShortcut("alt+m", {
    description: "Metrics: collapse or expand the footer",
    handler: () => {
      // Switching layout never reclaims a footer another extension replaced.
      if (footer.owned) footer.toggle();
    },
  });
}
