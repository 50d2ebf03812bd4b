import v8 from 'node:v8';
import vm from 'node:vm';

// A large body leaves a trail of dead buffers outside V8's heap: each piece of an upload arrives
// in a fresh buffer from the TLS socket (16 KiB of decrypted bytes), and each chunk of a download
// is a buffer from the database driver. Streamed, each is garbage at once; but V8 schedules its
// collections by its own heap, which these buffers barely touch, so tens of MiB of them wait and
// the process grows with the file after all. A scavenge of the young generation (about a
// millisecond) frees them: the attachment paths ask for one after every COLLECT_EVERY_BYTES they
// pass on, so a body leaves at most that much behind.
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
