import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AppContext } from './context.js';
import { RevalidatingCache } from './revalidating-cache.js';
import { announceRevocation } from './revocation-notices.js';

const ctx = { redis: null } as unknown as AppContext;

test('an entry is trusted for the interval only, the size is bounded, a revocation empties it', async () => {
  const cache = new RevalidatingCache<string>(ctx, 500, 2);
  cache.set('a', 'A', 1000);
  assert.equal(cache.get('a', 1499), 'A');
  assert.equal(cache.get('a', 1500), undefined, 'read again once the interval has passed');
  cache.set('a', 'A', 2000);
  cache.set('b', 'B', 2000);
  cache.set('c', 'C', 2000); // past the bound: starts over
  assert.equal(cache.get('a', 2000), undefined);
  assert.equal(cache.get('c', 2000), 'C');
  await announceRevocation(ctx);
  assert.equal(cache.get('c', 2000), undefined, 'an announced revocation empties the cache at once');
});
