// The README's commands, verbatim, against a fresh demo deployment: the banner `npm start` prints
// (every line the README shows, in its order), then the 60-second tour run by bash as a reader
// pastes it (only the address changes: the test's server listens on a free port), each step's
// output held to what the README says it prints. An edit of the README or of the server that
// makes the two disagree fails here.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { DEMO_CONFIG_FILE, ROOT, startServer, tempDir, type TestServer } from './helpers/server.js';

const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const README_URL = 'https://127.0.0.1:8443';

/** The fenced blocks of a markdown text: info string and body. */
function blocks(markdown: string): { info: string; body: string }[] {
  const out: { info: string; body: string }[] = [];
  const fence = /^```(\S*)\n([\s\S]*?)^```$/gm;
  for (let m = fence.exec(markdown); m; m = fence.exec(markdown)) out.push({ info: m[1], body: m[2] });
  return out;
}

/** The one block whose body contains `marker`. */
function blockWith(marker: string): string {
  const found = blocks(README).filter((b) => b.body.includes(marker));
  assert.equal(found.length, 1, `one README block contains ${JSON.stringify(marker)}`);
  return found[0].body;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A line the README shows as a pattern: `…` stands for anything (with the characters of the word it
 * ends and the spaces around it), ids and times for any id and
 * time (they differ at every run), runs of spaces for any spacing; `places` maps the README's
 * example addresses and paths to this run's.
 */
function pattern(line: string, places: [string, string][]): RegExp {
  const PLACE = '\u0000';
  const values: string[] = [];
  let text = line;
  for (const [from, to] of places) text = text.split(from).join(`${PLACE}${values.push(to) - 1}${PLACE}`);
  // An elided value (`RUX2Rz…`, `01a20113-…`) is any value; `, …,` elides whole members.
  let source = escape(text.replace(/[A-Za-z0-9_-]*…/g, '…').replace(/\s*…\s*/g, '…'))
    .replace(/…/g, '.*?')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '[0-9a-f-]{36}')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\\\.\d{3}Z/g, '[0-9T:.Z-]{24}')
    .replace(/ {2,}/g, '\\s+');
  source = source.replace(new RegExp(`${PLACE}(\\d+)${PLACE}`, 'g'), (_, i) => escape(values[Number(i)]));
  return new RegExp(source);
}

let server: TestServer;
let home: string;

before(async () => {
  // The reader's checkout: the tour runs where `data/` is the server's data dir.
  home = tempDir('gatehouse-readme-');
  mkdirSync(path.join(home, 'data'));
  server = await startServer({ configFile: DEMO_CONFIG_FILE, dataDir: path.join(home, 'data') });
});
after(async () => {
  await server?.stop();
  rmSync(home, { recursive: true, force: true });
});

test('npm start: the banner shows every line the README shows, in its order', () => {
  const shown = blockWith('gatehouse listening on')
    .split('\n')
    .filter((l) => l.trim() !== '');
  const places: [string, string][] = [
    [README_URL, server.url],
    ['/home/you/gatehouse/data', server.dataDir],
    ['/home/you/gatehouse/examples/zoo/gatehouse.yaml', DEMO_CONFIG_FILE],
  ];
  const output = server.output().split('\n');
  let at = 0;
  for (const line of shown) {
    const want = pattern(line.trim(), places);
    const found = output.findIndex((l, i) => i >= at && want.test(l));
    assert.ok(found >= 0, `the banner has no line like the README's\n  ${line}\nafter line ${at} of:\n${output.join('\n')}`);
    at = found + 1;
  }
});

test('the 60-second tour, pasted into bash, prints what the README says', () => {
  const tour = blockWith('# 1. A token for the demo user');
  assert.match(tour, new RegExp(`^B=${escape(README_URL)}$`, 'm'));
  // Each numbered step announces itself, so that its output can be told apart.
  const script = tour
    .replace(new RegExp(`^B=${escape(README_URL)}$`, 'm'), `B=${server.url}`)
    .replace(/^# (\d+)\. /gm, (_, n) => `echo "@@step ${n}"\n# ${n}. `);
  const run = spawnSync('bash', ['-c', script], { cwd: home, encoding: 'utf8', timeout: 60_000 });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stderr, '', 'no command complains');
  const steps = new Map<string, string>();
  for (const part of run.stdout.split('@@step ').slice(1)) {
    const [n, ...rest] = part.split('\n');
    steps.set(n.trim(), rest.join('\n'));
  }
  assert.deepEqual([...steps.keys()], ['1', '2', '3', '4', '5', '6']);

  // The README's printed output: sections `# 2 / 3`, `# 4`, `# 5`, each for the steps it names.
  const printed = blockWith('HTTP/1.1 405 Method Not Allowed');
  const sections = printed.split(/^# /m).slice(1);
  assert.ok(sections.length >= 3);
  const places: [string, string][] = [[README_URL, server.url]];
  const described = new Set<string>();
  for (const section of sections) {
    const [head, ...body] = section.split('\n');
    const names = head.split('/').map((s) => s.trim());
    names.forEach((n) => described.add(n));
    const output = names.map((n) => steps.get(n) ?? '').join('\n');
    // A wrapped line (indented) continues the one before it.
    const lines: string[] = [];
    for (const line of body) {
      if (line.trim() === '') continue;
      if (/^\s/.test(line) && lines.length) lines[lines.length - 1] += line.trim();
      else lines.push(line.trim());
    }
    for (const line of lines) assert.match(output, pattern(line, places), `step ${head}: the README says it prints\n  ${line}\nbut it printed:\n${output}`);
  }
  // The steps the README shows no output for answer no error.
  for (const [n, output] of steps) {
    if (described.has(n)) continue;
    assert.doesNotMatch(output, /"error"/, `step ${n} printed an error:\n${output}`);
  }
  // Step 6 lists records: the demo's and the tour's zoos.
  // Two arrays, back to back (curl adds no newline).
  const six = steps.get('6')!.trim();
  const [ranges, searched] = [six.slice(0, six.indexOf('][') + 1), six.slice(six.indexOf('][') + 1)];
  assert.ok(Array.isArray(JSON.parse(ranges)) && JSON.parse(ranges).length > 0, ranges);
  assert.equal(JSON.parse(searched)[0].name, 'Tierpark', searched);
});
