import type { AppContext } from './context.js';
import { contextCache } from './context-cache.js';

// Listeners of what a context's servers do, attached by the composition root (the metrics of
// src/main/metrics.ts). The servers announce; nothing is counted where the event happens.

export class Observers<A extends unknown[]> {
  private readonly list: ((...args: A) => void)[] = [];

  /** Adds a listener; the function returned removes it. */
  add(observer: (...args: A) => void): () => void {
    this.list.push(observer);
    return () => {
      const at = this.list.indexOf(observer);
      if (at >= 0) this.list.splice(at, 1);
    };
  }

  notify(...args: A): void {
    for (const observer of this.list) observer(...args);
  }
}

/** The observers of one kind of event (`name`) of this context. */
export function observersOf<A extends unknown[]>(ctx: AppContext, name: string): Observers<A> {
  return contextCache(ctx, `observers:${name}`, () => new Observers<A>());
}
