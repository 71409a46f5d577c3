/**
 * Wire names shared with sessions and producers that already exist. They are a compatibility surface:
 * never rename them.
 */
export const ENTRY_REQUEST = "orbit.pi-metrics.v2";
export const ENTRY_RUN = "orbit.pi-metrics.run.v2";
export const ENTRY_TRACE = "orbit.pi-metrics.trace.v2";
export const ENTRY_AGENT = "orbit.pi-metrics.agent.v1";
export const ENTRY_DELEGATION = "orbit.pi-metrics.delegation.v1";
export const ENTRY_RECEIPT = "orbit.translator.usage.v1";
/** Older parent schema 1 entry type, read but never written. */
export const ENTRY_LEGACY_V1 = "orbit.pi-metrics";
/** In-process event channel for external agent snapshots. */
export const AGENT_EVENT = "orbit.pi-metrics.agent.v1";

export const SCHEMA = 2;
export const THROUGHPUT_BASIS = "reported_output_tokens/observed_stream_elapsed_seconds";
export const TIMING_BASIS = "context_with_system";

/** Samples per persisted chunk: about 32 seconds at 250 ms. */
export const SAMPLE_CHUNK = 128;
export const OBS_WINDOW_MS = 2000;
export const OBS_BUCKET_MS = 100;
export const OBS_MIN_SPAN_MS = 250;
export const OBS_CHARS_PER_TOKEN = 4;
