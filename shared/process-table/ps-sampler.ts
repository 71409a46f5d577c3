/**
 * One `ps` per sample for all the jobs of a runtime, whichever actor threads they run on. The threads that sample a
 * job's tree meet on a BroadcastChannel named after the runtime; the one with the lowest thread id among those heard
 * from lately runs `ps` at the fastest cadence any of them asked for, and broadcasts the rows that carry one of the
 * runtime's tags. Every thread hands each of its trees the rows of its tag. Pi's thread takes no part.
 *
 * A thread announces itself (`here`) every ANNOUNCE_MS and says `bye` when its last tree ends; one not heard from for
 * SILENT_MS (its thread hung, or ended without a word) is forgotten, and the next lowest takes over. Two threads that
 * both think they lead for a moment each run a `ps`: wasted, never wrong.
 */
import { BroadcastChannel, threadId } from "node:worker_threads";
import { ps, selectUser } from "./ps-run.ts";
import type { PsRow } from "./ps-rows.ts";

const ANNOUNCE_MS = 1_000;
const SILENT_MS = 3_500;

type Message =
  | { kind: "here"; thread: number; everyMs: number }
  | { kind: "bye"; thread: number }
  | { kind: "rows"; thread: number; rows: PsRow[] };

/** A tree's subscription: the rows of its tag at each sample. */
interface Subscriber {
  tag: string;
  everyMs: number;
  onRows(at: number, rows: PsRow[]): void;
}

class RuntimeSampler {
  private readonly prefix: string;
  private readonly channel: BroadcastChannel;
  private readonly subscribers = new Set<Subscriber>();
  /** Other threads heard from: their cadence and when (monotonic ms). */
  private readonly peers = new Map<number, { everyMs: number; heardAt: number }>();
  private readonly announcer: ReturnType<typeof setInterval>;
  private sampler: ReturnType<typeof setTimeout> | null = null;
  private sampling = false;
  private readonly onEmpty: () => void;

  constructor(runtimeId: string, onEmpty: () => void) {
    this.prefix = `${runtimeId}/`;
    this.onEmpty = onEmpty;
    this.channel = new BroadcastChannel(`pi-jobs-process-table:${runtimeId}`);
    this.channel.onmessage = (event) => this.received((event as { data: Message }).data);
    (this.channel as unknown as { unref(): void }).unref();
    this.announcer = setInterval(() => this.announce(), ANNOUNCE_MS);
    this.announcer.unref();
  }

  add(subscriber: Subscriber): () => void {
    this.subscribers.add(subscriber);
    this.announce();
    this.schedule();
    return () => {
      this.subscribers.delete(subscriber);
      if (this.subscribers.size > 0) return;
      this.channel.postMessage({ kind: "bye", thread: threadId } satisfies Message);
      clearInterval(this.announcer);
      if (this.sampler !== null) clearTimeout(this.sampler);
      this.channel.close();
      this.onEmpty();
    };
  }

  private everyMs(): number {
    let every = Number.POSITIVE_INFINITY;
    for (const subscriber of this.subscribers) every = Math.min(every, subscriber.everyMs);
    for (const peer of this.peers.values()) every = Math.min(every, peer.everyMs);
    return every;
  }

  private announce(): void {
    if (this.subscribers.size === 0) return;
    let every = Number.POSITIVE_INFINITY;
    for (const subscriber of this.subscribers) every = Math.min(every, subscriber.everyMs);
    this.channel.postMessage({ kind: "here", thread: threadId, everyMs: every } satisfies Message);
  }

  private leads(): boolean {
    const now = performance.now();
    for (const [thread, peer] of this.peers) {
      if (now - peer.heardAt > SILENT_MS) this.peers.delete(thread);
      else if (thread < threadId) return false;
    }
    return true;
  }

  private received(message: Message): void {
    if (message.kind === "bye") {
      this.peers.delete(message.thread);
      return;
    }
    if (message.kind === "here") {
      const known = this.peers.has(message.thread);
      this.peers.set(message.thread, { everyMs: message.everyMs, heardAt: performance.now() });
      if (!known) this.schedule();
      return;
    }
    this.peers.set(message.thread, { everyMs: this.peers.get(message.thread)?.everyMs ?? Number.POSITIVE_INFINITY, heardAt: performance.now() });
    this.deliver(message.rows);
  }

  /** The next sample: taken here if this thread leads then, else left to the leader (and looked at again). */
  private schedule(): void {
    if (this.sampler !== null) clearTimeout(this.sampler);
    const every = this.everyMs();
    if (!Number.isFinite(every)) return;
    this.sampler = setTimeout(() => void this.sample(), every);
    this.sampler.unref();
  }

  private async sample(): Promise<void> {
    this.sampler = null;
    if (this.leads() && !this.sampling) {
      this.sampling = true;
      try {
        const rows = (await ps(selectUser())) ?? [];
        const runtime = rows.filter((row) => row.tag !== null && row.tag.startsWith(this.prefix));
        this.channel.postMessage({ kind: "rows", thread: threadId, rows: runtime } satisfies Message);
        this.deliver(runtime);
      } finally {
        this.sampling = false;
      }
    }
    if (this.subscribers.size > 0) this.schedule();
  }

  private deliver(rows: readonly PsRow[]): void {
    const at = performance.now();
    const byTag = new Map<string, PsRow[]>();
    for (const row of rows) {
      const list = byTag.get(row.tag!);
      if (list === undefined) byTag.set(row.tag!, [row]);
      else list.push(row);
    }
    for (const subscriber of [...this.subscribers]) subscriber.onRows(at, byTag.get(subscriber.tag) ?? []);
  }
}

const samplers = new Map<string, RuntimeSampler>();

/** Subscribes one job's tree to its runtime's samples; returns the unsubscribe. */
export function subscribeTree(runtimeId: string, tag: string, everyMs: number, onRows: (at: number, rows: PsRow[]) => void): () => void {
  let sampler = samplers.get(runtimeId);
  if (sampler === undefined) {
    sampler = new RuntimeSampler(runtimeId, () => samplers.delete(runtimeId));
    samplers.set(runtimeId, sampler);
  }
  return sampler.add({ tag, everyMs, onRows });
}
