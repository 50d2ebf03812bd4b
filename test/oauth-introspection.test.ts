// Who may introspect and revoke what (RFC 7662 §4, RFC 7009 §2.1): a client learns about, and
// ends, only the tokens issued to itself; a client registered as a resource server
// (`--introspect`) may introspect every token. Anything else is answered as an unknown token.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type InProcessApp } from './helpers/app.js';
import { addClient, addUser, basic, introspect, post, type RegisteredClient } from './helpers/oauth.js';

const PASSWORD = 'correct horse battery';
let server: InProcessApp;
let a: RegisteredClient; // the token's client
let b: RegisteredClient; // another confidential client
let rs: RegisteredClient; // a resource server

before(async () => {
  server = await startApp();
  await addUser(server, 'alice', PASSWORD);
  a = await addClient(server, 'app-a', ['--grant', 'password', '--grant', 'client_credentials', '--grant', 'refresh_token']);
  b = await addClient(server, 'app-b', ['--grant', 'client_credentials']);
  rs = await addClient(server, 'resource-server', ['--grant', 'client_credentials', '--introspect']);
});
after(async () => server?.cleanup());

async function tokensOfA(): Promise<{ access_token: string; refresh_token: string }> {
  const r = await post(server, 'token', { grant_type: 'password', username: 'alice', password: PASSWORD, scope: 'zoos:read orders:read' }, { auth: basic(a.client_id, a.client_secret!) });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

test("another client introspecting a client's access or refresh token learns nothing: {active:false}, as for an unknown token", async () => {
  const t = await tokensOfA();
  for (const token of [t.access_token, t.refresh_token]) {
    assert.deepEqual(await introspect(server, token, b), { active: false });
    for (const hint of ['access_token', 'refresh_token']) {
      const r = await post(server, 'introspection', { token, token_type_hint: hint }, { auth: basic(b.client_id, b.client_secret!) });
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, { active: false });
    }
  }
  const cc = await post(server, 'token', { grant_type: 'client_credentials', scope: 'zoos:read' }, { auth: basic(a.client_id, a.client_secret!) });
  assert.deepEqual(await introspect(server, cc.body.access_token, b), { active: false });
  assert.deepEqual(await introspect(server, 'no-such-token', b), { active: false });
});

test('a client introspects its own tokens; a resource server (--introspect) every client’s', async () => {
  const t = await tokensOfA();
  for (const by of [a, rs]) {
    const access = await introspect(server, t.access_token, by);
    assert.equal(access.active, true, by.client_id);
    assert.equal(access.client_id, 'app-a');
    assert.equal(access.username, 'alice');
    assert.equal(access.scope, 'zoos:read orders:read');
    const refresh = await introspect(server, t.refresh_token, by);
    assert.equal(refresh.active, true, by.client_id);
    assert.equal(refresh.token_type, 'refresh_token');
    assert.equal(refresh.client_id, 'app-a');
  }
  assert.equal(rs.introspect, true);
  assert.equal(a.introspect, false);
});

test("another client's revocation of a token is answered 200 and changes nothing (RFC 7009 §2.1)", async () => {
  const t = await tokensOfA();
  for (const [token, hint] of [
    [t.access_token, 'access_token'],
    [t.refresh_token, 'refresh_token'],
    [t.access_token, 'refresh_token'],
    [t.refresh_token, 'access_token'],
  ]) {
    const r = await post(server, 'revocation', { token, token_type_hint: hint }, { auth: basic(b.client_id, b.client_secret!) });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {});
  }
  // Neither does a resource server's: introspecting any token is not ending it.
  assert.equal((await post(server, 'revocation', { token: t.refresh_token }, { auth: basic(rs.client_id, rs.client_secret!) })).status, 200);
  assert.equal((await introspect(server, t.access_token, a)).active, true);
  assert.equal((await introspect(server, t.refresh_token, a)).active, true);
  const refreshed = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: t.refresh_token }, { auth: basic(a.client_id, a.client_secret!) });
  assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
  // Its own client's revocation does end it.
  assert.equal((await post(server, 'revocation', { token: refreshed.body.refresh_token }, { auth: basic(a.client_id, a.client_secret!) })).status, 200);
  assert.equal((await introspect(server, refreshed.body.access_token, a)).active, false);
});
