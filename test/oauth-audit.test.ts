// The audit trail: grants, refreshes, revocations, replays and failed logins are structured log
// events with client id, subject and reason — and never a secret.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type InProcessApp } from './helpers/app.js';
import { addClient, addUser, basic, obtainCode, post, sleep, type RegisteredClient } from './helpers/oauth.js';

let server: InProcessApp;
let app: RegisteredClient;
const CB = 'https://client.example/cb';
const PASSWORD = 'grace-password-1';

before(async () => {
  server = await startApp({ logLevel: 'info', file: true });
  await addUser(server, 'grace', PASSWORD);
  app = await addClient(server, 'app', ['--grant', 'authorization_code', '--grant', 'password', '--grant', 'refresh_token', '--redirect-uri', CB]);
});
after(async () => {
  await server.cleanup();
});

function events(): Record<string, unknown>[] {
  return server
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{') && l.includes('"event"'))
    .map((l) => JSON.parse(l));
}

test('security events are logged with client, subject and reason, never with secrets', async () => {
  const auth = basic('app', app.client_secret!);
  const secrets: string[] = [PASSWORD, app.client_secret!, 'wrong-password-x'];

  const bad = await post(server, 'token', { grant_type: 'password', username: 'grace', password: 'wrong-password-x' }, { auth });
  assert.equal(bad.status, 400);
  const good = await post(server, 'token', { grant_type: 'password', username: 'grace', password: PASSWORD }, { auth });
  const refreshed = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: good.body.refresh_token }, { auth });
  await post(server, 'token', { grant_type: 'refresh_token', refresh_token: good.body.refresh_token }, { auth });
  const { code } = await obtainCode(server, { clientId: 'app', redirectUri: CB, username: 'grace', password: PASSWORD });
  const exchanged = await post(server, 'token', { grant_type: 'authorization_code', code, redirect_uri: CB }, { auth });
  await post(server, 'token', { grant_type: 'authorization_code', code, redirect_uri: CB }, { auth });
  await post(server, 'revocation', { token: exchanged.body.access_token }, { auth });
  secrets.push(good.body.access_token, good.body.refresh_token, refreshed.body.access_token, refreshed.body.refresh_token, code, exchanged.body.access_token);
  await sleep(300); // let the child's stdout arrive

  const seen = events();
  const find = (event: string) => seen.find((e) => e.event === event);
  for (const name of ['login.failed', 'grant.issued', 'token.refreshed', 'refresh.reused', 'code.issued', 'code.replayed', 'token.revoked']) {
    const e = find(name);
    assert.ok(e, `${name} logged; saw ${seen.map((x) => x.event).join(', ')}`);
    assert.equal(e.client_id, 'app', name);
  }
  assert.match(String(find('grant.issued')!.subject), /^user:/);
  assert.ok(find('login.failed')!.reason);
  assert.ok(find('refresh.reused')!.reason);
  const log = server.output();
  for (const s of secrets) assert.equal(log.includes(s), false, 'a secret leaked into the log');
});

test('a failed HTTP Basic client authentication is logged with the client id it claimed', async () => {
  const res = await post(server, 'token', { grant_type: 'client_credentials' }, { auth: basic('app', 'not-the-secret') });
  assert.equal(res.status, 401);
  await sleep(300);
  const failed = events().filter((e) => e.event === 'client.auth_failed');
  assert.ok(failed.length > 0, 'client.auth_failed logged');
  assert.equal(failed[failed.length - 1].client_id, 'app');
  assert.equal(server.output().includes('not-the-secret'), false);
});

test('in maintenance the token endpoint answers 503 in the RFC 6749 error shape', async () => {
  assert.equal((await server.cli(['maintenance', 'on'])).status, 0);
  try {
    let res = await post(server, 'token', { grant_type: 'client_credentials' }, { auth: basic('app', app.client_secret!) });
    for (let i = 0; i < 30 && res.status !== 503; i++) {
      await sleep(100);
      res = await post(server, 'token', { grant_type: 'client_credentials' }, { auth: basic('app', app.client_secret!) });
    }
    assert.equal(res.status, 503);
    assert.equal(res.body.error, 'temporarily_unavailable');
    assert.equal(typeof res.body.error_description, 'string');
    assert.ok(Number(res.headers.get('retry-after')) > 0);
    assert.match(res.headers.get('strict-transport-security') ?? '', /max-age/);
  } finally {
    assert.equal((await server.cli(['maintenance', 'off'])).status, 0);
  }
});
