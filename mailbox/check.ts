/**
 * Compiled schema checks for the mailbox boundary, used in development and tests (docs/decisions/mailbox-checks.md).
 * Only the host
 * loads them: its end of the data port checks both directions, so worker code never needs TypeBox.
 */
import type { TSchema } from "typebox";
import { Compile } from "typebox/compile";
import { ActorToHost, HostToActor } from "./messages.ts";
import { JobSpec } from "./spec.ts";

/** Returns null for a valid value, else where and why it is invalid. */
export type Checker = (value: unknown) => string | null;

const cache = new WeakMap<TSchema, Checker>();

export function compileChecker(schema: TSchema): Checker {
  let checker = cache.get(schema);
  if (!checker) {
    const compiled = Compile(schema);
    checker = (value) => {
      if (compiled.Check(value)) return null;
      const first = compiled.Errors(value)[0];
      return first ? `${first.instancePath || "/"} ${first.message}` : "invalid";
    };
    cache.set(schema, checker);
  }
  return checker;
}

export interface ProtocolCheckers {
  jobSpec: Checker;
  actorToHost: Checker;
  hostToActor: Checker;
}

export function protocolCheckers(): ProtocolCheckers {
  return {
    jobSpec: compileChecker(JobSpec),
    actorToHost: compileChecker(ActorToHost),
    hostToActor: compileChecker(HostToActor),
  };
}
