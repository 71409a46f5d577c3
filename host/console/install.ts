/**
 * Installs the UI into one extension instance: the activity rows above the editor, the /monitor console, the
 * /shell-jobs-sessions picker and the monitor's transcript renderers. Everything here reads snapshots built from the
 * host's services and acts only through their APIs; nothing here owns job state, and nothing here ever sends a
 * message to the model.
 *
 * Redraws: the activity rows ask for one at most every 250 ms, and only while jobs run (or just after the last one
 * ended, so its row goes); the console's refresh is a 250 ms timer that runs only while it is open and jobs run.
 */
import type { ExtensionAPI, ExtensionCommandContext, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { Component, TUI } from "@earendil-works/pi-tui";
import { renderActivity } from "../../ui/activity.ts";
import { MonitorConsole } from "../../ui/console.ts";
import type { ConsoleSource, JobsOverlay, OverlayOptions } from "../../ui/jobs-overlay.ts";
import { SessionsPicker } from "../../ui/sessions-picker.ts";
import type { UiTheme } from "../../ui/theme.ts";
import type { InstanceLife } from "../session/instance-life.ts";
import type { MonitorService } from "../monitor/service.ts";
import type { ShellService } from "../shell/service.ts";
import { listText } from "../shell/result-text.ts";
import { registerMonitorRenderers } from "./monitor-renderers.ts";
import { highlightShell } from "./transcript-rows.ts";
import { registerShellRenderers } from "./shell-renderers.ts";
import { registerWaitRenderers } from "./wait-renderers.ts";
import { createSnapshotBuilder, type SnapshotBuilder } from "./views.ts";
import { safe } from "../../shared/sanitize.ts";
import { shownStatus, startingOf } from "../../shared/start-stage.ts";

export const ACTIVITY_WIDGET = "pi-jobs.activity";
/** At most four redraws a second (architecture invariant 5). */
export const REFRESH_MS = 250;

export interface UiDeps {
  life: InstanceLife;
  /** Null in an entry that installs shell jobs alone: the UI then shows those. */
  monitors: () => MonitorService | null;
  shell: () => ShellService;
}

function safely<T>(read: () => T): T | null {
  try {
    return read();
  } catch {
    return null;
  }
}

/** The activity rows: a component over the builder's running jobs, redrawn by a 250 ms tick while jobs run. */
function activityWidget(builder: SnapshotBuilder, tui: TUI, theme: UiTheme): Component & { dispose(): void } {
  let shown = 0;
  const timer = setInterval(() => {
    const count = builder.running().length;
    if (count > 0 || shown > 0) tui.requestRender();
  }, REFRESH_MS);
  timer.unref();
  return {
    render(width: number): string[] {
      const jobs = builder.running();
      shown = jobs.length;
      return renderActivity(jobs, { width, terminalRows: tui.terminal.rows, nowMs: Date.now(), theme });
    },
    invalidate() {},
    dispose() {
      clearInterval(timer);
    },
  };
}

function consoleSource(builder: SnapshotBuilder): ConsoleSource {
  return {
    snapshot: (request) => builder.build(request),
    stop: (key) => builder.stop(key),
    stopAll: () => builder.stopAll(),
  };
}

/** Opens a focused full-height overlay over the builder's jobs; its refresh timer lives exactly as long as the overlay. */
async function openOverlay(
  ctx: ExtensionCommandContext,
  builder: SnapshotBuilder,
  create: (options: OverlayOptions) => JobsOverlay,
): Promise<void> {
  let timer: ReturnType<typeof setInterval> | null = null;
  const stopTimer = (): void => {
    if (timer !== null) clearInterval(timer);
    timer = null;
  };
  try {
    await ctx.ui.custom<void>(
      (tui, theme, keybindings, done) => {
        const close = (): void => {
          stopTimer();
          done();
        };
        const component = create({
          source: consoleSource(builder),
          host: { requestRender: () => tui.requestRender(), rows: () => tui.terminal.rows },
          theme,
          keys: { matches: (data: string, id: string) => keybindings.matches(data, id as never) },
          onClose: close,
        });
        timer = setInterval(() => {
          if (!component.hasRunning()) return;
          component.refresh();
          tui.requestRender();
        }, REFRESH_MS);
        return Object.assign(component, { dispose: stopTimer });
      },
      { overlay: true, overlayOptions: { anchor: "top-left", width: "100%", maxHeight: "100%" } },
    );
  } finally {
    stopTimer();
  }
}

export function installUi(pi: ExtensionAPI, deps: UiDeps): void {
  const builder = createSnapshotBuilder({
    monitors: () => safely(deps.monitors),
    shell: () => safely(deps.shell),
  });

  registerMonitorRenderers(pi, {
    inConsole: (monitorId) => {
      const monitors = safely(deps.monitors);
      if (monitors === null) return false;
      return monitors.active().some((r) => r.monitorId === monitorId) || monitors.history().some((r) => r.monitorId === monitorId);
    },
  });
  registerShellRenderers(pi);
  registerWaitRenderers(pi);

  const showWidget = (ctx: ExtensionContext): void => {
    if (ctx.mode !== "tui") return;
    ctx.ui.setWidget(ACTIVITY_WIDGET, (tui, theme) => activityWidget(builder, tui, theme));
  };
  pi.on("session_start", (_event, ctx) => showWidget(ctx));
  pi.on("session_shutdown", (_event, ctx) => {
    if (ctx.mode === "tui") ctx.ui.setWidget(ACTIVITY_WIDGET, undefined);
  });

  pi.registerCommand("monitor", {
    description: "Inspect and stop the monitors and shell jobs of this session",
    handler: async (_args, ctx) => {
      if (ctx.mode !== "tui") {
        ctx.ui.notify(textListing(builder), "info");
        return;
      }
      await openOverlay(ctx, builder, (options) => new MonitorConsole({ ...options, highlight: highlightShell }));
    },
  });

  pi.registerCommand("shell-jobs-sessions", {
    description: "Pick a shell job, see its state and output tail, stop it (`stop N` stops one directly)",
    handler: async (args, ctx) => {
      const [verb, idText] = args.trim().split(/\s+/);
      if (verb === "stop") {
        const answer = await builder.stop(`shell:${Number(idText)}`);
        ctx.ui.notify(answer, answer.startsWith("stopped") ? "info" : "warning");
        return;
      }
      if (ctx.mode !== "tui") {
        const shell = safely(deps.shell);
        ctx.ui.notify(shell === null ? "No shell sessions." : listText(shell.list({})), "info");
        return;
      }
      await openOverlay(ctx, builder, (options) => new SessionsPicker(options));
    },
  });
}

/** /monitor outside the TUI (RPC): one line per job, status first, after a count of the starting jobs while any start. */
function textListing(builder: SnapshotBuilder): string {
  const jobs = builder.build().jobs;
  if (jobs.length === 0) return "No monitors or shell jobs in this session.";
  const starting = startingOf(jobs);
  const lines = jobs.map((job) => `${shownStatus(job)} · ${job.kind} ${job.id} · ${safe(job.title.replace(/\s+/g, " "))}`);
  return (starting === null ? lines : [starting, ...lines]).join("\n");
}
