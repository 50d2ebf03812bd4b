import v8 from 'node:v8';

/**
 * How far V8 lets the old generation grow past what its last full collection kept before it
 * collects again: 1 + HEAP_GROWING_PERCENT / 100 times that (and at least V8's minimum step).
 *
 * V8's own factor lets garbage pile up before the first full collection; 20% keeps the resident
 * size flat at no measurable CPU, and is not a ceiling (docs/benchmarks.md, "Why the code is as
 * it is": "The heap growing factor").
 */
export const HEAP_GROWING_PERCENT = 20;

/**
 * Sets V8's heap growing factor for this process, unless node was started with one
 * (`node --heap-growing-percent=0 …` gives V8 back its own choice). V8 reads the flag at every
 * full collection, so setting it after start takes effect from the next one. Returns the
 * percent that applies, or null when the operator's own setting does.
 */
export function boundHeapGrowth(execArgv: readonly string[] = process.execArgv): number | null {
  if (execArgv.some((a) => /^--heap[-_]growing[-_]percent(=|$)/.test(a))) return null;
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return HEAP_GROWING_PERCENT;
}
