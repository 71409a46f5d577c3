/**
 * How long an actor's heartbeat has stood still. The actor bumps a counter in its cell a few times a second while its
 * event loop runs (actors/job-actor.ts); this side sees only the counter, so it dates a change from the first look
 * that found it. A busy machine makes the beats late, a hung thread stops them: the supervisor tells the two apart
 * by how long the counter stood still, never by how late the actor is.
 */
import { performance } from "node:perf_hooks";

export class Heartbeat {
  private readonly read: () => number;
  private readonly now: () => number;
  private value: number;
  private since: number;

  constructor(read: () => number, now: () => number = () => performance.now()) {
    this.read = read;
    this.now = now;
    this.value = read();
    this.since = now();
  }

  /** Milliseconds since the counter was first seen at its current value: never more than it really stood still. */
  stillFor(): number {
    const value = this.read();
    const now = this.now();
    if (value !== this.value) {
      this.value = value;
      this.since = now;
    }
    return now - this.since;
  }
}
