// CORS (docs/oauth.md#a-browser-app-step-by-step): every rule, black-box over HTTPS.
// Browsers enforce CORS; these tests check what the server answers that browsers rely on.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type InProcessApp } from './helpers/app.js';
import { addClient, basic, sleep } from './helpers/oauth.js';

const SPA = 'http://127.0.0.1:5555';
const SPA_EXTRA = 'https://app.example.com';
const OTHER = 'http://localhost:6666';
const STRANGER = 'https://evil.example.net';
const SECRET = 'cors-client-secret-0123456789abcdefghij';

let server: InProcessApp;
before(async () => {
  server = await startApp({ file: true });
  // A browser app's client: origins from its redirect URI and from --origin.
  await addClient(server, 'spa', ['--secret', SECRET, '--grant', 'client_credentials', '--redirect-uri', `${SPA}/callback`, '--origin', SPA_EXTRA]);
  await addClient(server, 'other', ['--secret', SECRET, '--grant', 'client_credentials', '--redirect-uri', `${OTHER}/cb`]);
});
after(async () => server?.cleanup());

async function tokenOf(client: string): Promise<string> {
  const res = await server.fetch(`${server.authUrl}/token`, {
    method: 'POST',
    headers: { authorization: basic(client, SECRET), 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: 'grant_type=client_credentials&scope=zoos%3Aread%20zoos%3Awrite',
  });
  assert.equal(res.status, 200);
  return ((await res.json()) as { access_token: string }).access_token;
}

function preflight(target: string, origin: string, method = 'PATCH', headers = 'authorization, content-type, if-match') {
  return server.fetch(target, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers } });
}

const varyOf = (res: Response) => (res.headers.get('vary') ?? '').toLowerCase().split(/\s*,\s*/);

test('client add prints its origins: the redirect URIs\' and the --origin ones', async () => {
  const shown = (await server.cli(['client', 'list', '--json']));
  assert.equal(shown.status, 0, shown.stderr);
  const spa = (JSON.parse(shown.stdout) as { client_id: string; origins: string[] }[]).find((c) => c.client_id === 'spa')!;
  assert.deepEqual(spa.origins, [SPA, SPA_EXTRA]);
});

test('a bad --origin is refused by name, nothing registered', async () => {
  for (const origin of ['https://app.example.com/', 'https://app.example.com/path', 'http://app.example.com', 'not a url', 'https://user@app.example.com']) {
    const r = (await server.cli(['client', 'add', 'bad-origin', '--secret', SECRET, '--grant', 'client_credentials', '--origin', origin]));
    assert.notEqual(r.status, 0, origin);
    assert.match(r.stderr, /--origin/, origin);
  }
  assert.doesNotMatch((await server.cli(['client', 'list', '--json'])).stdout, /bad-origin/);
});

test('/v1 preflight from an origin of some client: 204 with the methods, headers and max-age; never credentials', async () => {
  for (const origin of [SPA, SPA_EXTRA, OTHER]) {
    const res = await preflight('/v1/zoos/0190f4e2-0000-7000-8000-000000000000', origin);
    assert.equal(res.status, 204, origin);
    assert.equal(res.headers.get('access-control-allow-origin'), origin);
    assert.match(res.headers.get('access-control-allow-methods') ?? '', /\bPATCH\b/);
    for (const h of ['Authorization', 'Content-Type', 'If-Match', 'Idempotency-Key', 'X-HTTP-Method-Override', 'Last-Event-ID'])
      assert.match(res.headers.get('access-control-allow-headers') ?? '', new RegExp(`\\b${h}\\b`), h);
    assert.equal(res.headers.get('access-control-max-age'), '600');
    assert.equal(res.headers.get('access-control-allow-credentials'), null);
    assert.ok(varyOf(res).includes('origin'));
  }
});

test('/v1 preflight from an origin no client lists: 403 JSON naming the origin', async () => {
  const res = await preflight('/v1/zoos', STRANGER, 'GET', 'authorization');
  assert.equal(res.status, 403);
  assert.match(res.headers.get('content-type') ?? '', /application\/json/);
  const body = (await res.json()) as { error: string; detail: Record<string, string> };
  assert.match(body.detail.origin, /evil\.example\.net/);
  assert.equal(res.headers.get('access-control-allow-origin'), null);
});

test('an OPTIONS that is not a preflight is an ordinary request (401 without a token, 405 with one)', async () => {
  const res = await server.fetch('/v1/zoos', { method: 'OPTIONS', headers: { origin: SPA } });
  assert.equal(res.status, 401);
  assert.equal(res.headers.get('access-control-allow-methods'), null);
  const token = await tokenOf('spa');
  const authed = await server.fetch('/v1/zoos', { method: 'OPTIONS', headers: { origin: SPA, authorization: `Bearer ${token}` } });
  assert.equal(authed.status, 405);
  assert.match(authed.headers.get('allow') ?? '', /GET/);
});

test('an actual request: allowed only for the origins of its own token\'s client, with the exposed headers', async () => {
  const token = await tokenOf('spa');
  const created = await server.json('POST', '/v1/zoos', { name: 'CORS zoo' }, { authorization: `Bearer ${token}`, origin: SPA });
  assert.equal(created.status, 201);
  assert.equal(created.headers.get('access-control-allow-origin'), SPA);
  const exposed = created.headers.get('access-control-expose-headers') ?? '';
  for (const h of ['Location', 'ETag', 'Link', 'X-Total-Count', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'WWW-Authenticate'])
    assert.match(exposed, new RegExp(`\\b${h}\\b`), h);
  assert.equal(created.headers.get('access-control-allow-credentials'), null);

  const fromExtra = await server.json('GET', '/v1/zoos', undefined, { authorization: `Bearer ${token}`, origin: SPA_EXTRA });
  assert.equal(fromExtra.headers.get('access-control-allow-origin'), SPA_EXTRA);
  assert.ok(varyOf(fromExtra as unknown as Response).includes('origin'));

  // Another client's origin, a stranger, no Origin at all: no CORS headers (the browser blocks the read).
  for (const origin of [OTHER, STRANGER]) {
    const res = await server.json('GET', '/v1/zoos', undefined, { authorization: `Bearer ${token}`, origin });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('access-control-allow-origin'), null, origin);
  }
  const plain = await server.json('GET', '/v1/zoos', undefined, { authorization: `Bearer ${token}` });
  assert.equal(plain.headers.get('access-control-allow-origin'), null);
  // Without Origin the answer still varies by it (a cache must not hand it to a CORS request), once.
  assert.deepEqual(varyOf(plain as unknown as Response).filter((v) => v === 'origin'), ['origin']);
  for (const path of ['/.well-known/oauth-authorization-server', '/oauth/token', '/health']) {
    const res = await server.fetch(path, { headers: { accept: 'application/json' } });
    assert.deepEqual(varyOf(res).filter((v) => v === 'origin'), ['origin'], path);
  }

  // The other client's token from its own origin is allowed; from the SPA's origin it is not.
  const otherToken = await tokenOf('other');
  assert.equal((await server.json('GET', '/v1/zoos', undefined, { authorization: `Bearer ${otherToken}`, origin: OTHER })).headers.get('access-control-allow-origin'), OTHER);
  assert.equal((await server.json('GET', '/v1/zoos', undefined, { authorization: `Bearer ${otherToken}`, origin: SPA })).headers.get('access-control-allow-origin'), null);
});

test('no valid token: the 401 is readable by any origin ("*", its challenge exposed), never with credentials', async () => {
  for (const [origin, authorization] of [[SPA, 'Bearer not-a-token'], [STRANGER, undefined], [STRANGER, 'Basic eDp5']] as const) {
    const res = await server.json('GET', '/v1/zoos', undefined, { origin, ...(authorization ? { authorization } : {}) });
    assert.equal(res.status, 401);
    assert.match(res.headers.get('www-authenticate') ?? '', /resource_metadata=/);
    assert.equal(res.headers.get('access-control-allow-origin'), '*', origin);
    assert.match(res.headers.get('access-control-expose-headers') ?? '', /\bWWW-Authenticate\b/);
    assert.doesNotMatch(res.headers.get('access-control-expose-headers') ?? '', /Location|ETag|Link|X-Total-Count/);
    assert.equal(res.headers.get('access-control-allow-credentials'), null);
    assert.ok(varyOf(res as unknown as Response).includes('origin'));
  }
  // Without Origin (no browser): no CORS headers, as every other answer.
  assert.equal((await server.json('GET', '/v1/zoos')).headers.get('access-control-allow-origin'), null);
  // The /v1 preflight stays for the origins of clients: a stranger's page may not send the token at all.
  assert.equal((await preflight('/v1/zoos', STRANGER, 'GET', 'authorization')).status, 403);
});

test('a valid token of another client: the 200 and its refusals (404, 405) stay unreadable', async () => {
  const token = await tokenOf('other');
  for (const [method, path] of [['GET', '/v1/zoos'], ['GET', '/v1/zoos/0190f4e2-0000-7000-8000-000000000000'], ['DELETE', '/v1/zoos']] as const) {
    const res = await server.json(method, path, undefined, { authorization: `Bearer ${token}`, origin: STRANGER });
    assert.notEqual(res.status, 401, path);
    assert.equal(res.headers.get('access-control-allow-origin'), null, `${method} ${path}`);
  }
});

test('/.well-known/* answers any origin', async () => {
  for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource']) {
    const res = await server.fetch(path, { headers: { origin: STRANGER, accept: 'application/json' } });
    assert.equal(res.status, 200, path);
    assert.equal(res.headers.get('access-control-allow-origin'), '*', path);
    assert.equal(res.headers.get('access-control-allow-credentials'), null);
    const plainOptions = await server.fetch(path, { method: 'OPTIONS', headers: { origin: STRANGER } });
    assert.notEqual(plainOptions.status, 400, 'not a preflight: no "Invalid Preflight Request"');
    assert.match(plainOptions.headers.get('content-type') ?? '', /json/);
    const pre = await preflight(path, STRANGER, 'GET', 'accept');
    assert.equal(pre.status, 204, path);
    assert.equal(pre.headers.get('access-control-allow-origin'), '*');
  }
});

test('the token and revocation endpoints answer the origins of registered clients only', async () => {
  for (const endpoint of ['token', 'revocation']) {
    const url = `${server.authUrl}/${endpoint}`;
    const pre = await preflight(url, SPA, 'POST', 'authorization, content-type');
    assert.equal(pre.status, 204, endpoint);
    assert.equal(pre.headers.get('access-control-allow-origin'), SPA);
    assert.match(pre.headers.get('access-control-allow-methods') ?? '', /POST/);
    assert.equal((await preflight(url, STRANGER, 'POST', 'content-type')).status, 403, endpoint);
  }
  const form = { method: 'POST', body: 'grant_type=client_credentials', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic('spa', SECRET) } };
  const ok = await server.fetch(`${server.authUrl}/token`, { ...form, headers: { ...form.headers, origin: OTHER } });
  assert.equal(ok.status, 200);
  assert.equal(ok.headers.get('access-control-allow-origin'), OTHER, 'any registered client\'s origin (the token endpoint does not know the page)');
  const refused = await server.fetch(`${server.authUrl}/token`, { ...form, headers: { ...form.headers, origin: STRANGER } });
  assert.equal(refused.headers.get('access-control-allow-origin'), null);
  // Pages of the authorization server are not for scripts of other origins.
  const authorize = await server.fetch(`${server.authUrl}/authorize?client_id=spa`, { headers: { origin: SPA } });
  assert.equal(authorize.headers.get('access-control-allow-origin'), null);
});

test('a client registered while the server runs is honoured within a second, and its removal too', async () => {
  const late = 'https://late.example.org';
  assert.equal((await preflight('/v1/zoos', late)).status, 403);
  await addClient(server, 'late', ['--secret', SECRET, '--grant', 'client_credentials', '--origin', late]);
  await sleep(1100);
  assert.equal((await preflight('/v1/zoos', late)).status, 204);
  const removed = (await server.cli(['client', 'remove', 'late']));
  assert.equal(removed.status, 0, removed.stderr);
  await sleep(1100);
  assert.equal((await preflight('/v1/zoos', late)).status, 403);
});
