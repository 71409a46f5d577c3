/**
 * A first-in, first-out list, pure: taking items off the front costs constant time on average, where
 * `Array.prototype.shift` moves every item left. The front is an index into an array that is compacted only once
 * the dead part is most of it, and the slots of removed items are cleared at once, so they are not kept alive.
 */
export interface Fifo<T> {
  readonly length: number;
  /** The item `index` places from the front, or undefined past the end. */
  at(index: number): T | undefined;
  /** Adds an item at the back. */
  push(item: T): void;
  /** Removes `count` items from the front (all of them, if there are fewer). */
  shift(count: number): void;
  /** Keeps only the first `count` items. */
  keep(count: number): void;
}

/** Dead slots at the front tolerated before the array is compacted (when they are also most of it). */
const COMPACT_AFTER = 64;

export function createFifo<T>(): Fifo<T> {
  let items: (T | undefined)[] = [];
  let head = 0;

  return {
    get length() {
      return items.length - head;
    },

    at(index) {
      return index < 0 ? undefined : items[head + index];
    },

    push(item) {
      items.push(item);
    },

    shift(count) {
      const end = Math.min(items.length, head + count);
      for (; head < end; head++) items[head] = undefined;
      if (head >= items.length) {
        items = [];
        head = 0;
      } else if (head > COMPACT_AFTER && head * 2 > items.length) {
        items = items.slice(head);
        head = 0;
      }
    },

    keep(count) {
      items = items.slice(head, head + Math.max(0, count));
      head = 0;
    },
  };
}
