/**
 * pi-jobs: background jobs for Pi. Everything lives in the host actor; this entry only installs it.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { installHost } from "./host/install.ts";

export default function piJobs(pi: ExtensionAPI): void {
  installHost(pi);
}
