import v8 from 'node:v8';
import { PerformanceObserver } from 'node:perf_hooks';
import type { Worker } from 'node:worker_threads';

const MiB = 1024 * 1024;

/** The node options that size the young generation: where the operator gave one, theirs wins. */
const SIZING_FLAGS = ['--max-semi-space-size', '--semi-space-growth-factor', '--min-semi-space-size'];

export interface YoungGenerationCap {
  /** Whether the cap is in force (false: the operator sized the young generation themselves). */
  readonly active: boolean;
  stop(): void;
}

/**
 * Keeps V8's young generation at most `semiSpaceMiB` per semi-space, as node's
 * `--max-semi-space-size` would, for a process that was started without that flag.
 *
 * Node's default lets the young generation grow to two 16 MiB semi-spaces under load; half of
 * that costs next to no CPU for gatehouse's requests and keeps 16 MiB off the resident set
 * (docs/benchmarks.md, issue 15). The flag itself is read once, when V8 starts, so a server
 * cannot give it to itself; V8 reads its growth factor at every resize instead. So after each
 * collection the growth factor is set to V8's default (2: the young generation may double) while
 * both semi-spaces are below the cap, and to 1 (it stays as it is) once they reach it, and again
 * as soon as a worker thread is online. V8 still shrinks the young generation when the process
 * idles, and it grows again up to the cap. A collection that finds the factor reset by a worker's
 * start before its own 'online' arrives can still double the young generation once.
 */
export function capYoungGeneration(semiSpaceMiB: number, options: { execArgv?: readonly string[]; nodeOptions?: string } = {}): YoungGenerationCap {
  const given = [...(options.execArgv ?? process.execArgv), ...(options.nodeOptions ?? process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  if (given.some((arg) => SIZING_FLAGS.some((flag) => arg.replaceAll('_', '-').startsWith(flag)))) {
    return { active: false, stop() {} };
  }
  // V8 reports the young generation ("new_space") as both semi-spaces together.
  const limit = 2 * semiSpaceMiB * MiB;
  // Set at every call, never remembered: V8 resets a growth factor below 2 to 2 whenever it
  // starts an isolate, which every worker thread is (the SQLite checkpointer is one).
  const adjust = () => v8.setFlagsFromString(`--semi-space-growth-factor=${youngGenerationBytes() < limit ? 2 : 1}`);
  const workerOnline = (worker: Worker) => worker.once('online', adjust);
  adjust();
  const observer = new PerformanceObserver(adjust);
  observer.observe({ entryTypes: ['gc'] });
  process.on('worker', workerOnline);
  return {
    active: true,
    stop() {
      observer.disconnect();
      process.off('worker', workerOnline);
      v8.setFlagsFromString('--semi-space-growth-factor=2');
    },
  };
}

/** Both semi-spaces of V8's young generation, in bytes. */
export function youngGenerationBytes(): number {
  return v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
}
