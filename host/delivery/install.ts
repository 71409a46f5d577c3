/**
 * Installs delivery into one Pi extension instance: the ledger of every result owed to the model (parked across
 * /reload and session switches with the jobs whose results it keeps), the scheduler that sends what falls due, and
 * the Pi events that move a result along: a tool boundary or agent_settled (a refused message may be retried), a
 * message that reached the conversation (a shell wake is delivered), a session switch (later results say they are
 * from an earlier session).
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import type { Parkable } from "../session/handover.ts";
import type { InstanceLife } from "../session/instance-life.ts";
import { ResultLedger, type WakeTiming } from "./ledger.ts";
import { shellJobName, type JobName, type MonitorDetails, type StuckAlert, type WatchdogDetails } from "./results.ts";
import { DeliveryScheduler } from "./scheduler.ts";
import { MONITOR_MESSAGE_TYPE, MONITOR_WATCHDOG_TYPE, WAKE_MESSAGE_TYPE, type SentWakeDetails } from "./wake-text.ts";

export interface DeliveryOptions {
  wakeTiming?: WakeTiming;
  /** Whether a shell job's alert still holds when its wake goes out (the shell's: host/shell/alerts.ts). */
  stillStuck: (alert: StuckAlert) => boolean;
  /** These results have reached the model in a wake's message (a persisted job's entry may go). */
  delivered: (names: readonly JobName[]) => void;
}

export interface Delivery {
  /** The ledger of this session's results (the one adopted after /reload or a switch). */
  ledger(): ResultLedger;
  scheduler: DeliveryScheduler;
}

const PARK_KEY = "delivery";

interface ParkedDelivery extends Parkable {
  ledger: ResultLedger;
}

export function installDelivery(pi: ExtensionAPI, life: InstanceLife, options: DeliveryOptions): Delivery {
  let ledger = new ResultLedger(options.wakeTiming);
  const scheduler = new DeliveryScheduler({
    ledger: () => ledger,
    shellWake: (_batch, message, _alerts, wake) =>
      pi.sendMessage<SentWakeDetails>(
        { customType: WAKE_MESSAGE_TYPE, content: message.content, display: true, details: { ...message.details, wake } },
        { deliverAs: "followUp", triggerTurn: true },
      ),
    monitor: (message) =>
      pi.sendMessage<MonitorDetails | WatchdogDetails>(
        { customType: message.kind === "report" ? MONITOR_MESSAGE_TYPE : MONITOR_WATCHDOG_TYPE, content: message.content, display: true, details: message.details },
        { deliverAs: "steer", triggerTurn: true },
      ),
    stillStuck: options.stillStuck,
  });

  life.onPark(PARK_KEY, () => {
    const parked: ParkedDelivery = { ledger, abandon: async () => ledger.clear() };
    return parked;
  });

  // Registered before the parts whose results it keeps, so that it has its ledger before they adopt theirs.
  pi.on("session_start", (event) => {
    const parked = life.adopted<ParkedDelivery>(PARK_KEY);
    if (parked) {
      ledger = parked.ledger;
      // Carried on by /new, /resume or /fork (not /reload, the same session): what was started before is an earlier session's.
      if (event.reason !== "reload") ledger.piSession += 1;
    } else {
      // A fresh start (or one after a quit, whose jobs ended with it): nothing is owed from before.
      ledger.clear();
    }
    // Results that fell due across a reload or a switch are delivered by this instance, once.
    scheduler.start();
  });

  pi.on("session_shutdown", () => scheduler.stop());

  pi.on("tool_execution_end", (event) => {
    if (event.parentToolCallId === undefined) scheduler.boundary();
  });

  pi.on("agent_settled", () => scheduler.boundary());

  // A wake is delivered once its message is in the conversation (Pi saves a message as it ends): the model has seen it.
  pi.on("message_end", (event) => {
    const message = event.message as { role?: string; customType?: string; details?: Partial<SentWakeDetails> };
    if (message.role !== "custom" || message.customType !== WAKE_MESSAGE_TYPE || typeof message.details?.wake !== "number") return;
    const shown = (message.details.sessions ?? []).map((s) => shellJobName(s.session_id));
    options.delivered(ledger.delivered(message.details.wake, shown));
  });

  return { ledger: () => ledger, scheduler };
}
