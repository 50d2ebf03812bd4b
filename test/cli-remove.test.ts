// gatehouse client remove / user remove / client rotate-secret against a running server: what was
// issued stops working within the revalidation bound (one second), the credentials stop working,
// nothing else changes (a rotated secret leaves the issued tokens alone).
// Spawned server (test/helpers/server.ts), not in process: the CLI's removals as a running server sees them (its caches' bound).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/server.js';
import { addClient, addUser, authorizeUrl, basic, CookieJar, obtainCode, page, post, signIn, sleep, type RegisteredClient } from './helpers/oauth.js';
import { asBearer, assertApiError } from './helpers/tokens.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.stop();
});

/** Polls until `check` holds; the revocation bound (docs/access.md#revocation-and-the-verification-cache) is one second, this allows three. */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 3000;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what}: still not the case after 3 s`);
    await sleep(100);
  }
}

async function clientCredentialsToken(client: RegisteredClient) {
  return post(server, 'token', { grant_type: 'client_credentials', scope: 'zoos:read zoos:write' }, { auth: basic(client.client_id, client.client_secret!) });
}

test('client remove: its tokens and credentials stop working, other clients are untouched', async () => {
  const doomed = addClient(server, 'doomed', ['--grant', 'client_credentials']);
  const other = addClient(server, 'bystander', ['--grant', 'client_credentials']);
  const issued = await clientCredentialsToken(doomed);
  assert.equal(issued.status, 200);
  const kept = await clientCredentialsToken(other);
  const doomedApi = asBearer(server, issued.body.access_token);
  const otherApi = asBearer(server, kept.body.access_token);
  const created = await doomedApi.json('POST', '/v1/zoos', { name: 'Kept Zoo', city: 'Porto', founded: 1990 });
  assert.equal(created.status, 201);

  const removed = server.cli(['client', 'remove', 'doomed']);
  assert.equal(removed.status, 0, removed.stderr);
  assert.deepEqual(JSON.parse(removed.stdout), { client_id: 'doomed', removed: true, grants_revoked: 0, access_tokens_revoked: 1 });

  await eventually('the removed client’s token is refused', async () => (await doomedApi.json('GET', '/v1/zoos')).status === 401);
  assertApiError(await doomedApi.json('GET', '/v1/zoos'), 401, ['authorization']);
  await eventually('the removed client cannot authenticate', async () => (await clientCredentialsToken(doomed)).status === 401);
  const refused = await clientCredentialsToken(doomed);
  assert.equal(refused.body.error, 'invalid_client');

  // The other client, its token and the records stay as they were.
  assert.equal((await otherApi.json('GET', '/v1/zoos')).status, 200);
  assert.equal((await clientCredentialsToken(other)).status, 200);
  const listed = JSON.parse(server.cli(['client', 'list']).stdout).map((c: { client_id: string }) => c.client_id);
  assert.ok(!listed.includes('doomed') && listed.includes('bystander'), listed.join(','));

  const again = server.cli(['client', 'remove', 'doomed']);
  assert.notEqual(again.status, 0);
  assert.match(again.stderr, /there is no client "doomed"/);
  assert.equal(again.stdout, '');
});

test('client remove: a token issued after the removal by a server that still had the client cached is dead too', async () => {
  const racer = addClient(server, 'racer', ['--grant', 'client_credentials']);
  assert.equal((await clientCredentialsToken(racer)).status, 200, 'the server now has the client cached');
  assert.equal(server.cli(['client', 'remove', 'racer']).status, 0);
  // Within the client cache's second the token endpoint may still answer; whatever it issues must not work.
  const late = await clientCredentialsToken(racer);
  if (late.status === 200) {
    const api = asBearer(server, late.body.access_token);
    await eventually('a late token of a removed client is refused', async () => (await api.json('GET', '/v1/zoos')).status === 401);
  } else {
    assert.equal(late.status, 401);
  }
});

test('client rotate-secret: the new secret is printed once and works, the old one stops, issued tokens stay valid', async () => {
  const app = addClient(server, 'rotating', ['--grant', 'client_credentials']);
  const before = await clientCredentialsToken(app);
  assert.equal(before.status, 200);
  const api = asBearer(server, before.body.access_token);

  const rotated = server.cli(['client', 'rotate-secret', 'rotating']);
  assert.equal(rotated.status, 0, rotated.stderr);
  const out = JSON.parse(rotated.stdout);
  assert.equal(out.client_id, 'rotating');
  assert.match(out.client_secret, /^[A-Za-z0-9_-]{43}$/);
  assert.notEqual(out.client_secret, app.client_secret);
  assert.equal(server.cli(['client', 'list']).stdout.includes(out.client_secret), false, 'never shown again');

  const renewed = { ...app, client_secret: out.client_secret };
  assert.equal((await clientCredentialsToken(renewed)).status, 200, 'the new secret works at once');
  await eventually('the old secret is refused', async () => (await clientCredentialsToken(app)).status === 401);
  assert.equal((await clientCredentialsToken(app)).body.error, 'invalid_client');
  assert.equal((await api.json('GET', '/v1/zoos')).status, 200, 'a token issued before the rotation still works');

  const chosen = server.cli(['client', 'rotate-secret', 'rotating', '--secret', 'a-chosen-secret-of-some-length-over-32-chars']);
  assert.equal(chosen.status, 0, chosen.stderr);
  assert.equal(JSON.parse(chosen.stdout).client_secret, 'a-chosen-secret-of-some-length-over-32-chars');
  assert.equal((await clientCredentialsToken({ ...app, client_secret: 'a-chosen-secret-of-some-length-over-32-chars' })).status, 200);

  const missing = server.cli(['client', 'rotate-secret', 'nobody']);
  assert.notEqual(missing.status, 0);
  assert.match(missing.stderr, /there is no client "nobody"/);
  addClient(server, 'spa', ['--public', '--grant', 'authorization_code', '--redirect-uri', 'https://spa.example/cb']);
  const publicClient = server.cli(['client', 'rotate-secret', 'spa']);
  assert.notEqual(publicClient.status, 0);
  assert.match(publicClient.stderr, /public: it has no secret/);
  assert.equal(publicClient.stdout, '');
});

test('user remove: the grants they gave and their sessions end, their password stops working, their records stay', async () => {
  const password = 'carol-password-1';
  const carol = addUser(server, 'carol', password);
  const dave = addUser(server, 'dave', 'dave-password-1');
  const app = addClient(server, 'carol-app', ['--grant', 'password', '--grant', 'refresh_token', '--redirect-uri', 'https://app.example/cb', '--grant', 'authorization_code']);
  const auth = basic(app.client_id, app.client_secret!);
  const login = (username: string, pw: string) => post(server, 'token', { grant_type: 'password', username, password: pw, scope: 'zoos:read zoos:write' }, { auth });
  const tokens = await login('carol', password);
  assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  const carolApi = asBearer(server, tokens.body.access_token);
  const zoo = await carolApi.json('POST', '/v1/zoos', { name: 'Carol Zoo', city: 'Faro', founded: 2001 });
  assert.equal(zoo.status, 201);
  const daveTokens = await login('dave', 'dave-password-1');
  const daveApi = asBearer(server, daveTokens.body.access_token);

  // A signed-in session on the authorization page.
  const jar = new CookieJar();
  const target = authorizeUrl({ response_type: 'code', client_id: app.client_id, redirect_uri: 'https://app.example/cb', scope: 'zoos:read', state: 's1' });
  await signIn(server, jar, target, 'carol', password);
  // And a code she approved that the client has not redeemed yet.
  const { code } = await obtainCode(server, { clientId: app.client_id, redirectUri: 'https://app.example/cb', username: 'carol', password, scope: 'zoos:read', jar });

  const removed = server.cli(['user', 'remove', 'carol']);
  assert.equal(removed.status, 0, removed.stderr);
  const out = JSON.parse(removed.stdout);
  assert.equal(out.id, carol.id);
  assert.equal(out.subject, `user:${carol.id}`);
  assert.equal(out.removed, true);
  assert.equal(out.grants_revoked, 1);
  assert.equal(out.access_tokens_revoked, 1);
  assert.equal(out.sessions_ended, 1);

  await eventually('the removed user’s token is refused', async () => (await carolApi.json('GET', '/v1/zoos')).status === 401);
  const refreshed = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token }, { auth });
  assert.equal(refreshed.status, 400);
  assert.equal(refreshed.body.error, 'invalid_grant');
  const redeemed = await post(server, 'token', { grant_type: 'authorization_code', code, redirect_uri: 'https://app.example/cb' }, { auth });
  assert.equal(redeemed.status, 400, 'the unredeemed code was deleted by the removal');
  assert.equal(redeemed.body.error, 'invalid_grant');
  assert.equal(redeemed.body.error_description, 'Unknown authorization code', 'a deleted code, not a replay');
  const relogin = await login('carol', password);
  assert.equal(relogin.status, 400);
  assert.equal(relogin.body.error, 'invalid_grant');
  // The session is gone: the authorization page asks for a password again.
  const again = await page(server, jar, target);
  assert.equal(again.status, 200);
  assert.match(again.html, /name="password"/);

  // Dave is untouched; Carol's record is still in the database (owned by her subject), not visible to others.
  assert.equal((await daveApi.json('GET', '/v1/zoos')).status, 200);
  assert.equal((await daveApi.json('GET', `/v1/zoos/${zoo.body.id}`)).status, 403);
  assert.equal(dave.username, 'dave');
  const users = JSON.parse(server.cli(['user', 'list']).stdout).map((u: { username: string }) => u.username);
  assert.deepEqual(users.sort(), ['dave']);

  const twice = server.cli(['user', 'remove', 'carol']);
  assert.notEqual(twice.status, 0);
  assert.match(twice.stderr, /there is no user named "carol"/);
});
