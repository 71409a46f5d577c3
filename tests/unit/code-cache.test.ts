/**
 * The actor threads' shared code cache (mailbox/code-cache.ts): written once, by the one thread that claimed it, and
 * read only by threads that load the same bundle file.
 */
import { describe, expect, it } from "vitest";
import { claimCodeCache, codeCacheUses, codeCacheWanted, countCodeCacheUse, createCodeCache, readCodeCache, writeCodeCache } from "../../mailbox/code-cache.ts";

const BUNDLE = { size: 181_156, mtimeMs: 1_796_542_514_145.25 };
const BYTES = Uint8Array.from({ length: 1000 }, (_, i) => i % 251);

describe("the shared code cache", () => {
  it("is claimed by one thread only, and read as written once written", () => {
    const cache = createCodeCache(4096);
    expect(codeCacheWanted(cache)).toBe(true);
    expect(readCodeCache(cache, BUNDLE)).toBeUndefined();
    expect(claimCodeCache(cache)).toBe(true);
    expect(claimCodeCache(cache)).toBe(false);
    expect(codeCacheWanted(cache)).toBe(false);
    // Claimed but not written yet: nothing to read.
    expect(readCodeCache(cache, BUNDLE)).toBeUndefined();
    writeCodeCache(cache, BUNDLE, BYTES);
    expect([...readCodeCache(cache, BUNDLE)!]).toEqual([...BYTES]);
    expect(codeCacheWanted(cache)).toBe(false);
  });

  it("is read only by a thread that loads the same bundle file", () => {
    const cache = createCodeCache(4096);
    claimCodeCache(cache);
    writeCodeCache(cache, BUNDLE, BYTES);
    expect(readCodeCache(cache, { ...BUNDLE, mtimeMs: BUNDLE.mtimeMs + 1 })).toBeUndefined();
    expect(readCodeCache(cache, { ...BUNDLE, size: BUNDLE.size - 1 })).toBeUndefined();
    expect(readCodeCache(cache, { ...BUNDLE })).toBeDefined();
  });

  it("stays unused for good when V8 made none or it does not fit", () => {
    for (const bytes of [null, new Uint8Array(0), new Uint8Array(4097)]) {
      const cache = createCodeCache(4096);
      claimCodeCache(cache);
      writeCodeCache(cache, BUNDLE, bytes);
      expect(readCodeCache(cache, BUNDLE), String(bytes?.byteLength)).toBeUndefined();
      expect(claimCodeCache(cache)).toBe(false);
    }
  });

  it("counts the threads that compiled from it", () => {
    const cache = createCodeCache(4096);
    expect(codeCacheUses(cache)).toBe(0);
    countCodeCacheUse(cache);
    countCodeCacheUse(cache);
    expect(codeCacheUses(cache)).toBe(2);
    // The count shares the header with the state and the bundle's identity, and disturbs neither.
    claimCodeCache(cache);
    writeCodeCache(cache, BUNDLE, BYTES);
    expect(readCodeCache(cache, BUNDLE)?.byteLength).toBe(BYTES.byteLength);
    expect(codeCacheUses(cache)).toBe(2);
  });
});
