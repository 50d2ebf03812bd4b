// The demo deployment: an empty data dir gets a demo user and client, and the printed curl
// commands really get a token and list /v1/zoos with it; later starts print no secret.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { startServer, type TestServer } from './helpers/server.js';

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
