// Spawned server (test/helpers/server.ts), not in process: the process starts, listens and stops.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { startServer, type TestServer } from './helpers/server.js';

let server: TestServer;
before(async () => {
  server = await startServer({ ownCertificate: true });
});
after(async () => {
  await server.cleanup();
});

test('start-up prints the base URL, the auth URL and where the data lives', () => {
  const out = server.output();
  assert.match(out, /gatehouse listening on https:\/\/127\.0\.0\.1:\d+/);
  assert.match(out, new RegExp(`auth server\\s+${server.url.replace(/[.]/g, '\\.')}/oauth`));
  assert.match(out, new RegExp(`admin\\s+${server.url.replace(/[.]/g, '\\.')}/admin `), 'the banner names the admin console');
  assert.match(out, new RegExp(`data dir\\s+${server.dataDir.replace(/[.]/g, '\\.')}`));
  // The process's V8 heap growing factor, set at start (src/main/heap.ts).
  assert.match(out, /heap growth\s+20% \(V8's --heap-growing-percent/);
});

test('a self-signed certificate is created in the data dir and trusted by the client', async () => {
  assert.ok(existsSync(path.join(server.dataDir, 'tls', 'cert.pem')));
  assert.match(server.output(), /certificate\s+\S+cert\.pem \(self-signed, created now\)/);
  const res = await server.json('GET', '/health');
  assert.equal(res.status, 200);
  assert.equal(res.body.status, 'ok');
  assert.match(res.headers.get('strict-transport-security') ?? '', /max-age=\d+/);
});
