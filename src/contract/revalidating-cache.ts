import type { AppContext } from './context.js';
import { onRevocation } from './revocation-notices.js';

// What each instance remembers from the database for a moment (token checks, clients): an entry
// is trusted for `ttlMs`, then read again, so a change made anywhere is seen within that bound;
// an announced revocation empties the cache at once. Bounded: past `max` entries it starts over.

export class RevalidatingCache<V> {
  private readonly entries = new Map<string, { value: V; at: number }>();

  constructor(
    ctx: AppContext,
    private readonly ttlMs: number,
    private readonly max: number,
  ) {
    onRevocation(ctx, () => this.entries.clear());
  }

  /** The value remembered for key if it is still fresh at `now`, else undefined. */
  get(key: string, now: number): V | undefined {
    const hit = this.entries.get(key);
    return hit && now - hit.at < this.ttlMs ? hit.value : undefined;
  }

  set(key: string, value: V, now: number): void {
    if (this.entries.size >= this.max) this.entries.clear();
    this.entries.set(key, { value, at: now });
  }
}
