// Runs the test files given, in the order given (`node --test` would sort them by name),
// TEST_CONCURRENCY at a time, each in its own process; prints the spec report, then the slowest
// files; exits 1 if any test failed. Started by run-tests.mjs, under `--import tsx`, which the
// files' processes inherit.
import { PassThrough } from 'node:stream';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import slowestFiles from './slowest-files.mjs';

const files = process.argv.slice(2);
const events = run({ files, concurrency: Number(process.env.TEST_CONCURRENCY) || true });
events.on('test:fail', (data) => {
  if (data.todo === undefined || data.todo === false) process.exitCode = 1; // a failing todo test fails nothing
});
// Both reports read every event: the spec report as the run goes, the slowest files at its end.
const forSpec = events.pipe(new PassThrough({ objectMode: true }));
const forSlowest = events.pipe(new PassThrough({ objectMode: true }));
forSpec.compose(new spec()).pipe(process.stdout);
forSlowest.compose(slowestFiles).pipe(process.stdout);
