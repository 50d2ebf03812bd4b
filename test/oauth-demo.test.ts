// The demo deployment: an empty data dir gets a demo user and client, and the printed curl
// commands really get a token and list /v1/zoos with it; later starts print no secret.
// Spawned server (test/helpers/server.ts), not in process: the start-up banner's curl commands and later starts on the same data dir.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { startServer, type TestServer } from './helpers/server.js';
import { CookieJar, decide, page, signIn, unescapeHtml } from './helpers/oauth.js';

let server: TestServer | null = null;

/** The start-up lines after "listening" arrive a moment later. */
async function outputMatching(s: TestServer, re: RegExp): Promise<string> {
  for (let i = 0; i < 100 && !re.test(s.output()); i++) await new Promise((r) => setTimeout(r, 50));
  return s.output();
}
let dataDir: string | null = null;
after(async () => {
  await server?.cleanup();
});

test('first start prints the demo credentials and curl commands that work as printed', async () => {
  server = await startServer({ config: { auth: { demo: true } } });
  dataDir = server.dataDir;
  const out = await outputMatching(server, /list the zoos with it:\n.*\n/);
  assert.match(out, /Demo deployment created/);
  const getToken = /^\s+(TOKEN=\$\(curl .*)$/m.exec(out)?.[1];
  const listZoos = /^\s+(curl .*\/v1\/zoos)$/m.exec(out)?.[1];
  assert.ok(getToken && listZoos, out);
  assert.ok(getToken.includes(`--cacert ${path.join(server.dataDir, 'tls', 'cert.pem')}`));
  const run = spawnSync('bash', ['-c', `set -e\n${getToken}\necho "TOKEN:$TOKEN"\n${listZoos} -s -w '\\nSTATUS:%{http_code}'`], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /TOKEN:[0-9a-f]{32}\.[A-Za-z0-9_-]{43}\n/);
  assert.match(run.stdout, /STATUS:200$/);
  // The demo user starts with zoos (and animals), so the banner's curl shows data.
  const zoos = JSON.parse(run.stdout.slice(run.stdout.indexOf('\n') + 1, run.stdout.lastIndexOf('\nSTATUS:')));
  assert.deepEqual(zoos.map((z: { name: string }) => z.name).sort(), ['Schönbrunn', 'Tiergarten', 'Zoo Leipzig']);
  assert.match(out, /the demo user owns 3 zoos and 5 animals/);

  const file = path.join(server.dataDir, 'demo-credentials.json');
  assert.ok(existsSync(file));
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const saved = JSON.parse(readFileSync(file, 'utf8'));
  assert.equal(saved.username, 'demo');
  assert.equal(saved.client_id, 'demo-app');
  // Stored hashed in the database: the secret is nowhere in it.
  const db = readFileSync(path.join(server.dataDir, 'gatehouse.db'));
  assert.equal(db.includes(Buffer.from(saved.client_secret)), false);
  assert.equal(db.includes(Buffer.from(saved.password)), false);
});

test('the banner\'s browser link ends on gatehouse\'s own callback page, whose curl redeems the code', async () => {
  assert.ok(server);
  const out = server.output();
  const link = /or sign in in a browser: (\S+)/.exec(out)?.[1];
  assert.ok(link, out);
  const saved = JSON.parse(readFileSync(path.join(server.dataDir, 'demo-credentials.json'), 'utf8'));
  assert.match(link, /[?&]prompt=consent(&|$)/, 'the page even when a grant covers the request (browser-demo.test.ts)');
  const jar = new CookieJar();
  const consent = await signIn(server, jar, link.slice(server.url.length), 'demo', saved.password);
  const done = await decide(server, jar, consent);
  assert.equal(done.status, 302);
  assert.ok(done.location!.startsWith(`${server.url}/demo/callback?`), done.location!);
  const landed = await page(server, jar, done.location!.slice(server.url.length));
  assert.equal(landed.status, 200);
  assert.match(landed.headers.get('content-security-policy') ?? '', /default-src 'none'/);
  assert.match(landed.html, /The demo app received a code/);
  const code = new URL(done.location!).searchParams.get('code')!;
  assert.ok(landed.html.includes(code));
  const [exchange, listZoos] = [...landed.html.matchAll(/<pre class="snippet">([^<]+)<\/pre>/g)].map((m) => unescapeHtml(m[1]));
  assert.ok(exchange && listZoos, landed.html);
  // The page never shows the client's secret: the command reads it from the 0600 file, which the
  // page names (whoever can read that file may redeem; whoever opens the page may not).
  assert.equal(landed.html.includes(saved.client_secret), false, 'the page shows no secret');
  assert.match(exchange, /\$CLIENT_SECRET/);
  const file = path.join(server.dataDir, 'demo-credentials.json');
  assert.ok(unescapeHtml(landed.html).includes(file), 'the page says where the secret is');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const run = spawnSync('bash', ['-c', `set -e\n${exchange}\n${listZoos} -s -w '\\nSTATUS:%{http_code}'`], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /Tiergarten[^]*STATUS:200$/);
  // Anyone may open the page with any code: still no secret, no password.
  const stranger = await page(server, new CookieJar(), '/demo/callback?code=x');
  assert.equal(stranger.status, 200);
  assert.equal(stranger.html.includes(saved.client_secret), false, 'an anonymous visitor sees no secret');
  assert.equal(stranger.html.includes(saved.password), false);
  // Opened without a code (or with an error), the page says so instead of showing a broken command.
  const empty = await page(server, jar, '/demo/callback?error=access_denied&state=xyz');
  assert.equal(empty.status, 200);
  assert.match(empty.html, /access_denied/);
});

test('a deployment that is not the demo has no /demo/callback', async () => {
  const plain = await startServer();
  try {
    assert.equal((await plain.json('GET', '/demo/callback?code=x')).status, 404);
  } finally {
    await plain.cleanup();
  }
});

test('a later start prints a short reminder and no secret', async () => {
  assert.ok(server && dataDir);
  const saved = JSON.parse(readFileSync(path.join(dataDir, 'demo-credentials.json'), 'utf8'));
  await server.stop();
  const again = await startServer({ dataDir, configFile: server.configFile });
  try {
    const out = await outputMatching(again, /certificate .*\n[^]*demo/);
    assert.match(out, /demo\s+user "demo", client "demo-app": credentials and ready-to-paste curl commands in .*demo-credentials\.json/);
    assert.equal(out.includes(saved.client_secret), false);
    assert.equal(out.includes(saved.password), false);
    assert.doesNotMatch(out, /Demo deployment created/);
  } finally {
    await again.stop();
  }
});
