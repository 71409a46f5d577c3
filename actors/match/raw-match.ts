/**
 * A hit of a job's pattern as the matcher reports it, before the monitor's contract applies its bounds: the one shape
 * the inline matcher, the regex sandbox, readiness and redaction share.
 */

export type MatchKind = "success" | "failure";

/** A regex hit as the matcher reports it, before any bound is applied. */
export interface RawMatch {
  kind: MatchKind;
  /** The whole match (`match[0]`). */
  text: string;
  /** Named groups; a group that did not take part is `undefined`. */
  groups: Readonly<Record<string, string | undefined>> | null;
  /** Set when secrets in `text` or `groups` were replaced before the contract saw them (actors/redact/monitor.ts). */
  redaction?: MatchRedaction;
}

/** What redaction replaced in one match: how many secrets, and whether any was in a capture. */
export interface MatchRedaction {
  count: number;
  captures: boolean;
}
