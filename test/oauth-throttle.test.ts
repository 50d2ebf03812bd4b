// Login throttling counts per user name AND per IP, independently (behind a trusted proxy, the IP
// is the client's address from X-Forwarded-For). test/oauth-throttle-race.test.ts: bursts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type InProcessApp } from './helpers/app.js';
import { addClient, addUser, basic, type RegisteredClient } from './helpers/oauth.js';

let server: InProcessApp;
let app: RegisteredClient;

before(async () => {
  server = await startApp({ config: { server: { trustProxy: true }, auth: { loginThrottle: { max: 2, window: 60 } } } });
  for (const name of ['kim', 'lee', 'max']) await addUser(server, name, `${name}-password-1`);
  app = await addClient(server, 'app', ['--grant', 'password']);
});
after(async () => {
  await server.cleanup();
});

async function passwordGrant(username: string, password: string, ip: string) {
  const res = await server.fetch('/oauth/token', {
    method: 'POST',
    headers: {
      accept: 'application/json',
      'content-type': 'application/x-www-form-urlencoded',
      authorization: basic('app', app.client_secret!),
      'x-forwarded-proto': 'https',
      'x-forwarded-for': ip,
    },
    body: new URLSearchParams({ grant_type: 'password', username, password }).toString(),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as { error?: string } };
}

test('per user name: failures from many IPs lock that user name, not the others', async () => {
  assert.equal((await passwordGrant('kim', 'guess-1', '10.0.0.1')).status, 400);
  assert.equal((await passwordGrant('kim', 'guess-2', '10.0.0.2')).status, 400);
  const locked = await passwordGrant('kim', 'kim-password-1', '10.0.0.3');
  assert.equal(locked.status, 429);
  assert.ok(Number(locked.retryAfter) >= 1);
  assert.equal((await passwordGrant('max', 'max-password-1', '10.0.0.3')).status, 200);
});

test('per IP: failures on many user names lock that IP, not the others', async () => {
  assert.equal((await passwordGrant('nobody-1', 'guess', '10.0.1.1')).status, 400);
  assert.equal((await passwordGrant('nobody-2', 'guess', '10.0.1.1')).status, 400);
  assert.equal((await passwordGrant('lee', 'lee-password-1', '10.0.1.1')).status, 429);
  assert.equal((await passwordGrant('lee', 'lee-password-1', '10.0.1.2')).status, 200);
});

test('a successful login gives back its own attempt, never the failures: the count is never reset', async () => {
  assert.equal((await passwordGrant('max', 'wrong', '10.0.2.1')).status, 400);
  assert.equal((await passwordGrant('max', 'max-password-1', '10.0.2.2')).status, 200);
  assert.equal((await passwordGrant('max', 'max-password-1', '10.0.2.3')).status, 200);
  // The success did not clear the first failure: one more failure spends the window.
  assert.equal((await passwordGrant('max', 'wrong', '10.0.2.4')).status, 400);
  const locked = await passwordGrant('max', 'max-password-1', '10.0.2.5');
  assert.equal(locked.status, 429);
  assert.ok(Number(locked.retryAfter) >= 1);
});
