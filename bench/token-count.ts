/**
 * Offline cl100k_base token counts for the benchmarks (js-tiktoken's ranks), fast on long runs of one character.
 */
import { Tiktoken } from "js-tiktoken/lite";
import cl100k_base from "js-tiktoken/ranks/cl100k_base";

export const encoder = new Tiktoken(cl100k_base);

// js-tiktoken merges byte pairs by rescanning the whole piece after every merge, which is quadratic: one 24 KiB run
// of letters (a single pre-token) takes half a minute. This counts with the same rule — repeatedly merge the
// adjacent pair of lowest rank, leftmost first — using a heap; bench/tokens.ts checks it against the library.
const internals = encoder as unknown as { patStr: string; rankMap: Map<string, number> };
const utf8 = new TextEncoder();

interface Pair {
  rank: number;
  left: number;
  right: number;
  end: number;
}

const before = (a: Pair, b: Pair): boolean => a.rank < b.rank || (a.rank === b.rank && a.left < b.left);

function pushHeap(heap: Pair[], pair: Pair): void {
  heap.push(pair);
  let i = heap.length - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (!before(heap[i] as Pair, heap[parent] as Pair)) break;
    [heap[i], heap[parent]] = [heap[parent] as Pair, heap[i] as Pair];
    i = parent;
  }
}

function popHeap(heap: Pair[]): Pair | undefined {
  const top = heap[0];
  const last = heap.pop();
  if (heap.length > 0 && last !== undefined) {
    heap[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let least = i;
      if (l < heap.length && before(heap[l] as Pair, heap[least] as Pair)) least = l;
      if (r < heap.length && before(heap[r] as Pair, heap[least] as Pair)) least = r;
      if (least === i) break;
      [heap[i], heap[least]] = [heap[least] as Pair, heap[i] as Pair];
      i = least;
    }
  }
  return top;
}

function pieceTokens(bytes: Uint8Array): number {
  const ranks = internals.rankMap;
  const n = bytes.length;
  if (ranks.has(bytes.join(","))) return 1;
  // Part i covers bytes [i, next[i]); prev links the parts backwards.
  const next = Int32Array.from({ length: n }, (_, i) => i + 1);
  const prev = Int32Array.from({ length: n }, (_, i) => i - 1);
  const heap: Pair[] = [];
  const consider = (left: number): void => {
    if (left < 0) return;
    const right = next[left] as number;
    if (right >= n) return;
    const end = next[right] as number;
    const rank = ranks.get(bytes.subarray(left, end).join(","));
    if (rank !== undefined) pushHeap(heap, { rank, left, right, end });
  };
  for (let i = 0; i < n - 1; i += 1) consider(i);
  let parts = n;
  for (let pair = popHeap(heap); pair !== undefined; pair = popHeap(heap)) {
    // Entries are never removed when a merge changes a neighbour; skip the ones that no longer describe two parts.
    if (next[pair.left] !== pair.right || next[pair.right] !== pair.end || prev[pair.right] !== pair.left) continue;
    next[pair.left] = pair.end;
    prev[pair.right] = -2;
    if (pair.end < n) prev[pair.end] = pair.left;
    parts -= 1;
    consider(prev[pair.left] as number);
    consider(pair.left);
  }
  return parts;
}

export function tokens(text: string): number {
  let count = 0;
  for (const match of text.matchAll(new RegExp(internals.patStr, "ug"))) count += pieceTokens(utf8.encode(match[0]));
  return count;
}

