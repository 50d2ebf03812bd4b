// docs/mcp.md's "Connect with the official SDK", as written: its `client add` block pasted into bash,
// its TypeScript program saved as mcp-demo.ts and started by its run command, against a fresh demo
// deployment; the test is the user, signing in and consenting on the URL the program prints (by
// HTTP, with the login and consent forms' helpers) and following the redirect to the program's
// loopback port. Only what test/oauth-registration-docs.test.ts substitutes changes: the address
// (the test's server listens on a free port) and the CLI (this checkout's). The directory it runs in
// stands for the repository's, as the doc assumes: a `data` dir the demo serves from, and a link to
// the checkout's node_modules (the SDK, tsx). The program listens on 33418, the port the doc names.
// Spawned: the doc runs the real CLI and node beside a server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DEMO_CONFIG_FILE, ROOT, startServer, tempDir, type TestServer } from './helpers/server.js';
import { CookieJar, decide, signIn } from './helpers/oauth.js';

const DOC = readFileSync(path.join(ROOT, 'docs', 'mcp.md'), 'utf8');
const DOC_URL = 'https://127.0.0.1:8443';

let server: TestServer;
let home: string;

before(async () => {
  home = tempDir('gatehouse-mcp-doc-');
  mkdirSync(path.join(home, 'data'));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(home, 'node_modules'));
  server = await startServer({ configFile: DEMO_CONFIG_FILE, dataDir: path.join(home, 'data') });
});
after(async () => {
  await server?.stop();
  rmSync(home, { recursive: true, force: true });
});

/** A block of the doc with the test's substitutions. */
const localized = (block: string) => block.split(DOC_URL).join(server.url).split('node dist/cli/main.js').join(`node ${path.join(ROOT, 'dist/cli/main.js')}`);

test('the SDK walkthrough registers the host, prints the sign-in URL, then the tools and a list_zoos answer', async () => {
  const section = DOC.slice(DOC.indexOf('## Connect with the official SDK'), DOC.indexOf('## Connect a desktop client'));
  const blocks = [...section.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1], text: m[2] }));
  assert.deepEqual(blocks.map((b) => b.lang), ['sh', 'ts', 'sh']);
  const [register, program, run] = blocks.map((b) => localized(b.text));
  assert.match(register, /client add mcp-host/);
  const file = /\bmcp-demo\.m?ts\b/.exec(run)![0];
  assert.match(section, new RegExp(`in a file \`${file}\``), 'the run command starts the file the doc names');

  const added = spawnSync('bash', ['-ec', register], { cwd: home, encoding: 'utf8', timeout: 60_000 });
  assert.equal(added.status, 0, added.stderr);
  writeFileSync(path.join(home, file), program);

  const child = spawn('bash', ['-ec', run], { cwd: home, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const killer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  try {
    // The user: opens the printed URL, signs in as the demo user, allows what is offered.
    const printed = await Promise.race([
      (async () => {
        for (;;) {
          const m = /Open in a browser:\n(\S+)\n/.exec(stdout);
          if (m) return m[1];
          await new Promise((r) => setTimeout(r, 100));
        }
      })(),
      exited.then((code) => assert.fail(`the program ended (${code}) before printing a URL:\n${stdout}\n${stderr}`)),
    ]);
    const authorize = new URL(printed);
    assert.equal(authorize.origin + authorize.pathname, `${server.url}/oauth/authorize`);
    assert.equal(authorize.searchParams.get('client_id'), 'mcp-host');
    assert.equal(authorize.searchParams.get('resource'), `${server.url}/mcp`);
    assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
    const { username, password } = JSON.parse(readFileSync(path.join(home, 'data', 'demo-credentials.json'), 'utf8')) as { username: string; password: string };
    const jar = new CookieJar();
    const consent = await signIn(server, jar, printed, username, password);
    const allowed = await decide(server, jar, consent);
    assert.equal(allowed.status, 302, allowed.html);
    const redirect = new URL(allowed.location!);
    assert.equal(`${redirect.origin}${redirect.pathname}`, 'http://127.0.0.1:33418/callback');
    // The browser follows the redirect to the program's loopback listener.
    const landed = await fetch(redirect);
    assert.equal(await landed.text(), 'Done: back to the terminal.');

    assert.equal(await exited, 0, `${stdout}\n${stderr}`);
  } finally {
    clearTimeout(killer);
    child.kill('SIGKILL');
  }
  // What it prints: the tool names (console.log of an array), then the list_zoos result.
  const listed = /^\[\n([\s\S]*?)^\]$/m.exec(stdout);
  assert.ok(listed, `the tool names in:\n${stdout}`);
  const verbs = ['list', 'get', 'create', 'update', 'delete'];
  const expected = ['zoos', 'animals', 'orders', 'articles'].flatMap((collection) => verbs.map((verb) => `${verb}_${collection}`));
  assert.deepEqual([...listed[1].matchAll(/'(\w+)'/g)].map((m) => m[1]), expected, 'every scope offered was allowed');
  const text = /text: '(\{"records".*\})'/.exec(stdout);
  assert.ok(text, `a list_zoos answer in:\n${stdout}`);
  const page = JSON.parse(text[1]) as { records: { name: string }[]; total: number };
  assert.deepEqual(page.records.map((z) => z.name).sort(), ['Tiergarten', 'Zoo Leipzig'], 'the demo user\'s zoos founded since 1800');
  assert.equal(page.total, 2);
});
