/**
 * Bytes kept in order, oldest dropped first, in one buffer that is reused: what a job's output window holds. Pure.
 *
 * Copying each chunk in, instead of keeping the chunk itself, lets the buffer a pipe read was delivered in die young:
 * a kept chunk lives long enough to be promoted to the old generation, where its memory waits for the next full
 * collection — under a flood that was tens of MiB per actor thread
 * (docs/decisions/output-window.md). Positions are absolute (bytes appended since the
 * start), so they never move when the buffer grows.
 */

const INITIAL_CAPACITY = 16 * 1024;

export class ByteRing {
  private buffer = new Uint8Array(INITIAL_CAPACITY);
  /** Absolute position of the oldest byte kept, and of the end. */
  private first = 0;
  private end = 0;

  /** Bytes kept now. */
  get length(): number {
    return this.end - this.first;
  }

  /** Appends `bytes`; returns the absolute position of their first byte. */
  append(bytes: Uint8Array): number {
    const at = this.end;
    this.reserve(this.length + bytes.length);
    const capacity = this.buffer.length;
    const offset = at % capacity;
    const head = Math.min(bytes.length, capacity - offset);
    this.buffer.set(bytes.subarray(0, head), offset);
    if (head < bytes.length) this.buffer.set(bytes.subarray(head), 0);
    this.end += bytes.length;
    return at;
  }

  /** Forgets every byte before absolute position `position`. */
  dropBefore(position: number): void {
    this.first = Math.min(this.end, Math.max(this.first, position));
  }

  /** Calls `visit` with the bytes from `from` to `to` (absolute, kept), in order, in at most two views of the buffer. */
  read(from: number, to: number, visit: (bytes: Uint8Array) => void): void {
    if (from < this.first || to > this.end || from > to) throw new RangeError(`bytes ${from}–${to} are not kept (${this.first}–${this.end})`);
    if (from === to) return;
    const capacity = this.buffer.length;
    const start = from % capacity;
    const length = to - from;
    const head = Math.min(length, capacity - start);
    visit(this.buffer.subarray(start, start + head));
    if (head < length) visit(this.buffer.subarray(0, length - head));
  }

  /** Grows (doubling, keeping the kept bytes at their positions) until `bytes` fit. */
  private reserve(bytes: number): void {
    if (bytes <= this.buffer.length) return;
    let capacity = this.buffer.length;
    while (capacity < bytes) capacity *= 2;
    const grown = new Uint8Array(capacity);
    // Each kept byte moves to its absolute position modulo the new capacity.
    for (let position = this.first; position < this.end; ) {
      const offset = position % this.buffer.length;
      const run = Math.min(this.end - position, this.buffer.length - offset);
      const target = position % capacity;
      const fits = Math.min(run, capacity - target);
      grown.set(this.buffer.subarray(offset, offset + fits), target);
      if (fits < run) grown.set(this.buffer.subarray(offset + fits, offset + run), 0);
      position += run;
    }
    this.buffer = grown;
  }
}
