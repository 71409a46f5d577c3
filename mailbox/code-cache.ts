/**
 * The actor threads' shared V8 code cache: one SharedArrayBuffer the pool makes and hands every thread it starts. The
 * first compiled thread to have started a job's process leaves in it what V8 compiled of the actor's bundle by then,
 * and every later thread compiles the bundle from it (actors/thread/cached-entry.ts; docs/decisions/code-cache.md).
 * Written once: the state word moves `empty` → `writing` →
 * `ready` (or `unused`), and only the thread whose compare-and-swap took it out of `empty` writes.
 *
 * V8 checks that a cache comes from its own version and flags, but of the source only its length; so the cache also
 * names the bundle file it was made from (size and modification time), and a thread whose file differs (a rebuild of
 * the checkout's dist/ while Pi runs) compiles without it.
 */

/** The file a cache was made from, as the thread that loads it sees it. */
export interface BundleIdentity {
  size: number;
  mtimeMs: number;
}

// Int32 words, then Float64 words (from byte 16), then the bytes.
const STATE = 0;
const LENGTH = 1;
/** Threads that compiled the bundle from the cache, V8 having accepted it. */
const USES = 2;
const SIZE = 2;
const MTIME = 3;
const HEADER_BYTES = 32;

const EMPTY = 0;
const WRITING = 1;
const READY = 2;
/** Nothing will be written: the cache did not fit, or V8 made none. */
const UNUSED = 3;

/**
 * Room for the cache. V8's cache of the actor bundle after an `echo` job is about 130 KiB; pages of the buffer that are
 * never written are never backed by memory.
 */
export const CODE_CACHE_CAPACITY = 2 * 1024 * 1024;

export function createCodeCache(capacity: number = CODE_CACHE_CAPACITY): SharedArrayBuffer {
  return new SharedArrayBuffer(HEADER_BYTES + capacity);
}

const wordsOf = (buffer: SharedArrayBuffer) => new Int32Array(buffer, 0, 3);
const identityOf = (buffer: SharedArrayBuffer) => new Float64Array(buffer, 0, 4);

/** Whether no thread has claimed the cache yet. */
export function codeCacheWanted(buffer: SharedArrayBuffer): boolean {
  return Atomics.load(wordsOf(buffer), STATE) === EMPTY;
}

/** Claims the cache: true for exactly one caller, which must then call `writeCodeCache`. */
export function claimCodeCache(buffer: SharedArrayBuffer): boolean {
  return Atomics.compareExchange(wordsOf(buffer), STATE, EMPTY, WRITING) === EMPTY;
}

/** Writes the claimed cache of `bundle`; null, or bytes that do not fit, leave it unused for good. */
export function writeCodeCache(buffer: SharedArrayBuffer, bundle: BundleIdentity, bytes: Uint8Array | null): void {
  const words = wordsOf(buffer);
  const fits = bytes !== null && bytes.byteLength > 0 && bytes.byteLength <= buffer.byteLength - HEADER_BYTES;
  if (fits) {
    new Uint8Array(buffer, HEADER_BYTES, bytes.byteLength).set(bytes);
    const identity = identityOf(buffer);
    identity[SIZE] = bundle.size;
    identity[MTIME] = bundle.mtimeMs;
    Atomics.store(words, LENGTH, bytes.byteLength);
  }
  // The store that publishes the state orders every write above before it, for whoever reads the state after it.
  Atomics.store(words, STATE, fits ? READY : UNUSED);
}

/** A copy of the cache, once written from the same bundle file; else undefined. */
export function readCodeCache(buffer: SharedArrayBuffer, bundle: BundleIdentity): Buffer | undefined {
  const words = wordsOf(buffer);
  if (Atomics.load(words, STATE) !== READY) return undefined;
  const identity = identityOf(buffer);
  if (identity[SIZE] !== bundle.size || identity[MTIME] !== bundle.mtimeMs) return undefined;
  return Buffer.from(new Uint8Array(buffer, HEADER_BYTES, Atomics.load(words, LENGTH)));
}

/** Counts a thread that compiled the bundle from the cache. */
export function countCodeCacheUse(buffer: SharedArrayBuffer): void {
  Atomics.add(wordsOf(buffer), USES, 1);
}

/** How many threads compiled the bundle from the cache. */
export function codeCacheUses(buffer: SharedArrayBuffer): number {
  return Atomics.load(wordsOf(buffer), USES);
}
