import v8 from 'node:v8';
import vm from 'node:vm';

// A large body leaves dead buffers outside V8's heap (TLS pieces of an upload, driver chunks of a
// download) that V8 does not count when it schedules collections, so the process grew with the
// file. The attachment paths ask for a scavenge after every COLLECT_EVERY_BYTES they pass on, so
// a body leaves at most that much behind (docs/benchmarks.md, "Why the code is as it is": "Dead
// buffers of large bodies").
//
// Node offers the collector only behind --expose-gc; the flag, set at run time, applies to
// contexts created afterwards, so one small context is made to fetch the function from. Where
// that fails, nothing is collected early and nothing else changes.

type Collect = (options: { type: 'minor' }) => void;

let collect: Collect | null | undefined;

function collector(): Collect | null {
  if (collect !== undefined) return collect;
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as unknown;
    collect = typeof gc === 'function' ? (gc as Collect) : null;
  } catch {
    collect = null;
  }
  return collect;
}

export const COLLECT_EVERY_BYTES = 2 * 1024 * 1024;

/**
 * A counter for one body: call it with each piece's length; after every COLLECT_EVERY_BYTES it
 * has the young generation scavenged, freeing the pieces already passed on.
 */
export function bodyGarbage(): (bytes: number) => void {
  let passed = 0;
  return (bytes) => {
    passed += bytes;
    if (passed < COLLECT_EVERY_BYTES) return;
    passed = 0;
    collector()?.({ type: 'minor' });
  };
}
