// A test reporter that prints, when the run ends, the test files that took longest (the sum of
// their top-level tests' durations) — where to look when `npm test` gets slow.
export default async function* slowestFiles(source) {
  const perFile = new Map();
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0 && event.data.file) {
      perFile.set(event.data.file, (perFile.get(event.data.file) ?? 0) + event.data.details.duration_ms);
    }
  }
  const rows = [...perFile].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TEST_SLOWEST ?? 15));
  if (!rows.length) return;
  yield '\nslowest test files (seconds in their tests):\n';
  for (const [file, ms] of rows) yield `${(ms / 1000).toFixed(1).padStart(7)}  ${file.replace(process.cwd() + '/', '')}\n`;
}
