/**
 * A first-in, first-out queue with a bound on both its length and its size in bytes. When it is
 * full, `push` waits for room (back-pressure) in arrival order, for at most a given time; entries
 * stay in the queue, counted against the bound, while they are in flight.
 */

export type Entry<T> = { readonly item: T; readonly bytes: number; inFlight: boolean };

type Waiter<T> = { item: T; bytes: number; resolve: (entry: Entry<T> | null) => void; timer: ReturnType<typeof setTimeout> | null };

export class BoundedQueue<T> {
  private entries: Entry<T>[] = [];
  private waiting: Waiter<T>[] = [];
  private heldBytes = 0;
  private peakLength = 0;
  private peakByteSize = 0;

  constructor(
    readonly maxItems: number,
    readonly maxBytes: number,
  ) {
    if (!(maxItems >= 1) || !(maxBytes >= 1)) throw new RangeError("a queue needs room for at least one item and one byte");
  }

  get length(): number {
    return this.entries.length;
  }
  get bytes(): number {
    return this.heldBytes;
  }
  get peakItems(): number {
    return this.peakLength;
  }
  get peakBytes(): number {
    return this.peakByteSize;
  }
  /** How many pushes wait for room. */
  get waiters(): number {
    return this.waiting.length;
  }

  /** The items held, oldest first (in flight or not). */
  items(): T[] {
    return this.entries.map((e) => e.item);
  }

  /** Whether an item of this size could ever fit (in an empty queue). */
  canEverHold(bytes: number): boolean {
    return bytes <= this.maxBytes;
  }

  /**
   * Adds the item when there is room, waiting up to `timeoutMs` for it behind earlier waiters.
   * Resolves with its entry, or null when no room came in time (or the item can never fit).
   */
  push(item: T, bytes: number, timeoutMs: number): Promise<Entry<T> | null> {
    if (!this.canEverHold(bytes)) return Promise.resolve(null);
    if (!this.waiting.length && this.fits(bytes)) return Promise.resolve(this.admit(item, bytes));
    if (timeoutMs <= 0) return Promise.resolve(null);
    return new Promise((resolve) => {
      const waiter: Waiter<T> = { item, bytes, resolve, timer: null };
      waiter.timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        resolve(null);
        this.admitWaiters(); // a large item at the head may have held back smaller ones
      }, timeoutMs);
      this.waiting.push(waiter);
    });
  }

  /** The oldest entries not in flight, up to these bounds (at least one when any), marked in flight. */
  take(maxItems: number, maxBytes: number): Entry<T>[] {
    const batch: Entry<T>[] = [];
    let size = 0;
    for (const entry of this.entries) {
      if (entry.inFlight) continue;
      if (batch.length >= maxItems || (batch.length > 0 && size + entry.bytes > maxBytes)) break;
      entry.inFlight = true;
      batch.push(entry);
      size += entry.bytes;
    }
    return batch;
  }

  /** Removes an entry (delivered, refused for good, or withdrawn), making room for waiters. */
  remove(entry: Entry<T>): boolean {
    const at = this.entries.indexOf(entry);
    if (at < 0) return false;
    this.entries.splice(at, 1);
    this.heldBytes -= entry.bytes;
    this.admitWaiters();
    return true;
  }

  /** Everything still held or waiting, removed: the caller accounts for them. */
  drain(): T[] {
    const items = this.entries.map((e) => e.item);
    for (const w of this.waiting.splice(0)) {
      if (w.timer !== null) clearTimeout(w.timer);
      w.resolve(null);
    }
    this.entries = [];
    this.heldBytes = 0;
    return items;
  }

  private fits(bytes: number): boolean {
    return this.entries.length < this.maxItems && this.heldBytes + bytes <= this.maxBytes;
  }

  private admit(item: T, bytes: number): Entry<T> {
    const entry: Entry<T> = { item, bytes, inFlight: false };
    this.entries.push(entry);
    this.heldBytes += bytes;
    this.peakLength = Math.max(this.peakLength, this.entries.length);
    this.peakByteSize = Math.max(this.peakByteSize, this.heldBytes);
    return entry;
  }

  private admitWaiters() {
    while (this.waiting.length && this.fits(this.waiting[0].bytes)) {
      const w = this.waiting.shift()!;
      if (w.timer !== null) clearTimeout(w.timer);
      w.resolve(this.admit(w.item, w.bytes));
    }
  }
}
