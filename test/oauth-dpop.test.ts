// DPoP (RFC 9449; docs/oauth.md#proof-of-possession): token requests with a proof get tokens bound
// to its key; the resource API (/v1) and userinfo then want `Authorization: DPoP` with a proof by
// that key, for that request and that token. Interop with oauth4webapi and openid-client, then the
// attacks: replays, proofs for another request, stale or future, by another key, without or with a
// wrong `ath`, with a private key inside, unsigned or symmetric, malformed or doubled headers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID, createHash } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { SignJWT, exportJWK, generateKeyPair, calculateJwkThumbprint, type CryptoKey } from 'jose';
import { startApp, type InProcessApp } from './helpers/app.js';
import { CookieJar, addClient, basic, decide, post, signIn, type RegisteredClient } from './helpers/oauth.js';
import { createUser } from '../src/authserver/model/users.js';
import { sqlOf } from '../src/platform/store/sql.js';

let server: InProcessApp;
let rp: RegisteredClient;
let as: oauth.AuthorizationServer;
const CB = 'https://rp.example/callback';
const PASSWORD = 'dora-password-1';

const inProcess = (url: string, init?: RequestInit) => server.fetch(url, (init ?? {}) as object) as unknown as Promise<Response>;
const opts = () => ({ [oauth.customFetch]: inProcess }) as const;

before(async () => {
  server = await startApp();
  await createUser(server.ctx, 'dora', PASSWORD, { email: 'dora@example.org', emailVerified: true, name: 'Dora Dee' });
  rp = await addClient(server, 'rp', ['--grant', 'authorization_code', '--grant', 'refresh_token', '--grant', 'client_credentials', '--redirect-uri', CB]);
  await addClient(server, 'spa', ['--public', '--grant', 'authorization_code', '--grant', 'refresh_token', '--redirect-uri', CB]);
  await addClient(server, 'strict', ['--grant', 'client_credentials', '--dpop', '--secret', 'strict-secret-strict-secret-strict-secret']);
  const issuer = new URL(server.url);
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...opts() }));
});
after(async () => {
  await server.cleanup();
});

type KeyPair = { publicKey: CryptoKey; privateKey: CryptoKey };
const es256 = () => generateKeyPair('ES256', { extractable: true }) as Promise<KeyPair>;
const tokenUrl = () => `${server.url}/oauth/token`;
const zoosUrl = () => `${server.url}/v1/zoos`;
const ath = (token: string) => createHash('sha256').update(token).digest('base64url');

/** A proof as a client makes it, with any claim or header member replaced. */
async function proof(key: KeyPair, htm: string, htu: string, claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}, alg = 'ES256'): Promise<string> {
  const jwk = await exportJWK(key.publicKey);
  return new SignJWT({ htm, htu, jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ...claims })
    .setProtectedHeader({ alg, typ: 'dpop+jwt', jwk, ...header })
    .sign(key.privateKey);
}

async function ccToken(dpop?: string, clientId = 'rp', secret = rp.client_secret!) {
  const res = await server.fetch('/oauth/token', {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded', authorization: basic(clientId, secret), ...(dpop ? { dpop } : {}) },
    body: 'grant_type=client_credentials&scope=zoos%3Aread',
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

const countTokens = async () => Number((await sqlOf(server.ctx.store).selectFrom('access_tokens').select((e) => e.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

async function zoos(authorization: string, dpop?: string | string[], method = 'GET') {
  const headers: Record<string, string> = { accept: 'application/json', authorization };
  const init: RequestInit = { method, headers };
  if (Array.isArray(dpop)) {
    const h = new Headers(headers);
    for (const p of dpop) h.append('dpop', p);
    init.headers = h;
  } else if (dpop !== undefined) headers.dpop = dpop;
  const res = await server.fetch('/v1/zoos', init as object);
  return { status: res.status, challenge: res.headers.get('www-authenticate') ?? '', body: await res.text() };
}

test('metadata names the DPoP algorithms; the resource metadata accepts bound tokens', async () => {
  assert.deepEqual(as.dpop_signing_alg_values_supported, ['ES256', 'RS256', 'PS256', 'EdDSA']);
  const pr = await server.json('GET', '/.well-known/oauth-protected-resource');
  assert.deepEqual(pr.body.dpop_signing_alg_values_supported, ['ES256', 'RS256', 'PS256', 'EdDSA']);
  assert.equal(pr.body.dpop_bound_access_tokens_required, false);
  const none = await zoos('');
  assert.equal(none.status, 401);
  assert.match(none.challenge, /^Bearer realm="gatehouse".*, DPoP algs="ES256 RS256 PS256 EdDSA"$/);
});

test('oauth4webapi: client credentials with DPoP, a bound token at /v1, introspection shows cnf.jkt', async () => {
  const keyPair = await oauth.generateKeyPair('ES256', { extractable: true });
  const DPoP = oauth.DPoP({ client_id: 'rp' }, keyPair);
  const res = await oauth.clientCredentialsGrantRequest(as, { client_id: 'rp' }, oauth.ClientSecretBasic(rp.client_secret!), { scope: 'zoos:read' }, { DPoP, ...opts() });
  const tokens = await oauth.processClientCredentialsResponse(as, { client_id: 'rp' }, res);
  assert.equal(tokens.token_type, 'dpop');
  const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey), 'sha256');

  const api = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(zoosUrl()), new Headers({ accept: 'application/json' }), null, { DPoP, ...opts() });
  assert.equal(api.status, 200, await api.clone().text());
  // The same again: a new proof (new jti) each time.
  const again = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(`${zoosUrl()}?limit=1`), new Headers({ accept: 'application/json' }), null, { DPoP, ...opts() });
  assert.equal(again.status, 200);

  const info = await post(server, 'introspection', { token: tokens.access_token }, { auth: basic('rp', rp.client_secret!) });
  assert.equal(info.body.active, true);
  assert.equal(info.body.token_type, 'DPoP');
  assert.deepEqual(info.body.cnf, { jkt });

  // Presented as a bearer token: refused, with a DPoP challenge.
  const asBearer = await zoos(`Bearer ${tokens.access_token}`);
  assert.equal(asBearer.status, 401);
  assert.match(asBearer.challenge, /^DPoP .*error="invalid_token"/);
});

test('oauth4webapi: a public client\'s code flow with DPoP; its refresh token is bound to the key; userinfo wants the proof', async () => {
  const keyPair = await oauth.generateKeyPair('ES256', { extractable: true });
  const DPoP = oauth.DPoP({ client_id: 'spa' }, keyPair);
  const verifier = oauth.generateRandomCodeVerifier();
  const url = new URL(as.authorization_endpoint!);
  for (const [k, v] of Object.entries({ client_id: 'spa', redirect_uri: CB, response_type: 'code', scope: 'openid profile zoos:read', state: 'st', code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' }))
    url.searchParams.set(k, v);
  const jar = new CookieJar();
  const consent = await signIn(server, jar, url.pathname + url.search, 'dora', PASSWORD);
  const done = await decide(server, jar, consent);
  const params = oauth.validateAuthResponse(as, { client_id: 'spa' }, new URL(done.location!), 'st');
  const res = await oauth.authorizationCodeGrantRequest(as, { client_id: 'spa' }, oauth.None(), params, CB, verifier, { DPoP, ...opts() });
  const tokens = await oauth.processAuthorizationCodeResponse(as, { client_id: 'spa' }, res);
  assert.equal(tokens.token_type, 'dpop');
  const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey), 'sha256');
  // A public client cannot introspect: the store shows the binding.
  const row = await sqlOf(server.ctx.store).selectFrom('refresh_tokens').select('jkt').where('hash', '=', createHash('sha256').update(tokens.refresh_token!).digest('base64url')).executeTakeFirstOrThrow();
  assert.equal(row.jkt, jkt);

  // userinfo with DPoP through the library.
  const info = await oauth.userInfoRequest(as, { client_id: 'spa' }, tokens.access_token, { DPoP, ...opts() });
  assert.equal(info.status, 200, await info.clone().text());
  // …and as Bearer: refused.
  const bearer = await server.fetch('/oauth/userinfo', { headers: { authorization: `Bearer ${tokens.access_token}` } });
  assert.equal(bearer.status, 401);
  assert.match(bearer.headers.get('www-authenticate')!, /^DPoP error="invalid_token"/);

  // Refreshing without a proof, or with another key: invalid_dpop_proof, and the refresh token is not spent.
  const without = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: 'spa' });
  assert.equal(without.status, 400);
  assert.equal(without.body.error, 'invalid_dpop_proof');
  const other = oauth.DPoP({ client_id: 'spa' }, await oauth.generateKeyPair('ES256'));
  const wrongKey = await oauth.refreshTokenGrantRequest(as, { client_id: 'spa' }, oauth.None(), tokens.refresh_token!, { DPoP: other, ...opts() });
  assert.equal(wrongKey.status, 400);
  assert.equal(((await wrongKey.json()) as { error: string }).error, 'invalid_dpop_proof');
  // With the same key: new bound tokens.
  const refreshed = await oauth.processRefreshTokenResponse(as, { client_id: 'spa' }, await oauth.refreshTokenGrantRequest(as, { client_id: 'spa' }, oauth.None(), tokens.refresh_token!, { DPoP, ...opts() }));
  assert.equal(refreshed.token_type, 'dpop');
  const api = await oauth.protectedResourceRequest(refreshed.access_token, 'GET', new URL(zoosUrl()), new Headers({ accept: 'application/json' }), null, { DPoP, ...opts() });
  assert.equal(api.status, 200);
});

test('a confidential client\'s refresh token is not bound; the access token of a refresh is bound to the proof given then', async () => {
  const keyPair = await oauth.generateKeyPair('ES256', { extractable: true });
  const DPoP = oauth.DPoP({ client_id: 'rp' }, keyPair);
  const verifier = oauth.generateRandomCodeVerifier();
  const url = new URL(as.authorization_endpoint!);
  for (const [k, v] of Object.entries({ client_id: 'rp', redirect_uri: CB, response_type: 'code', scope: 'zoos:read', state: 'st', code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' }))
    url.searchParams.set(k, v);
  const jar = new CookieJar();
  const done = await decide(server, jar, await signIn(server, jar, url.pathname + url.search, 'dora', PASSWORD));
  const params = oauth.validateAuthResponse(as, { client_id: 'rp' }, new URL(done.location!), 'st');
  const auth = oauth.ClientSecretBasic(rp.client_secret!);
  const tokens = await oauth.processAuthorizationCodeResponse(as, { client_id: 'rp' }, await oauth.authorizationCodeGrantRequest(as, { client_id: 'rp' }, auth, params, CB, verifier, { DPoP, ...opts() }));
  assert.equal(tokens.token_type, 'dpop');
  // Refreshed without a proof: a bearer token.
  const plain = await oauth.processRefreshTokenResponse(as, { client_id: 'rp' }, await oauth.refreshTokenGrantRequest(as, { client_id: 'rp' }, auth, tokens.refresh_token!, opts()));
  assert.equal(plain.token_type, 'bearer');
  assert.equal((await zoos(`Bearer ${plain.access_token}`)).status, 200);
  // With a proof by another key: bound to that one.
  const other = await oauth.generateKeyPair('ES256', { extractable: true });
  const bound = await oauth.processRefreshTokenResponse(as, { client_id: 'rp' }, await oauth.refreshTokenGrantRequest(as, { client_id: 'rp' }, auth, plain.refresh_token!, { DPoP: oauth.DPoP({ client_id: 'rp' }, other), ...opts() }));
  assert.equal(bound.token_type, 'dpop');
  const info = await post(server, 'introspection', { token: bound.access_token }, { auth: basic('rp', rp.client_secret!) });
  assert.equal(info.body.cnf.jkt, await calculateJwkThumbprint(await exportJWK(other.publicKey), 'sha256'));
});

test('openid-client: getDPoPHandle, client credentials, fetchProtectedResource at /v1, fetchUserInfo', async () => {
  const options = { [client.customFetch]: inProcess } as client.DiscoveryRequestOptions;
  const config = await client.discovery(new URL(server.url), 'rp', undefined, client.ClientSecretBasic(rp.client_secret!), options);
  config[client.customFetch] = inProcess;
  const DPoP = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'));
  const tokens = await client.clientCredentialsGrant(config, { scope: 'zoos:read' }, { DPoP });
  assert.equal(tokens.token_type, 'dpop');
  const res = await client.fetchProtectedResource(config, tokens.access_token, new URL(zoosUrl()), 'GET', undefined, new Headers({ accept: 'application/json' }), { DPoP });
  assert.equal(res.status, 200);

  // The code flow, then userinfo with the proof.
  const verifier = client.randomPKCECodeVerifier();
  const url = client.buildAuthorizationUrl(config, { redirect_uri: CB, scope: 'openid profile', code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state: 'st' });
  const jar = new CookieJar();
  const done = await decide(server, jar, await signIn(server, jar, url.pathname + url.search, 'dora', PASSWORD));
  const codeTokens = await client.authorizationCodeGrant(config, new URL(done.location!), { pkceCodeVerifier: verifier, expectedState: 'st' }, undefined, { DPoP });
  assert.equal(codeTokens.token_type, 'dpop');
  const info = await client.fetchUserInfo(config, codeTokens.access_token, codeTokens.claims()!.sub, { DPoP });
  assert.equal(info.preferred_username, 'dora');
});

test('a client registered --dpop must send a proof; with one it gets bound tokens', async () => {
  const secret = 'strict-secret-strict-secret-strict-secret';
  const before = await countTokens();
  const without = await ccToken(undefined, 'strict', secret);
  assert.equal(without.status, 400);
  assert.equal(without.body.error, 'invalid_dpop_proof');
  assert.equal(await countTokens(), before);
  const key = await es256();
  const withProof = await ccToken(await proof(key, 'POST', tokenUrl()), 'strict', secret);
  assert.equal(withProof.status, 200);
  assert.equal(withProof.body.token_type, 'DPoP');
});

test('the token endpoint refuses a bad proof with 400 invalid_dpop_proof and issues nothing', async () => {
  const key = await es256();
  const other = await es256();
  const now = Math.floor(Date.now() / 1000);
  const hs = await new SignJWT({ htm: 'POST', htu: tokenUrl(), jti: randomUUID(), iat: now }).setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk: { kty: 'oct', k: 'c2VjcmV0' } }).sign(new TextEncoder().encode('secret'));
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const jwk = await exportJWK(key.publicKey);
  const unsigned = `${b64({ alg: 'none', typ: 'dpop+jwt', jwk })}.${b64({ htm: 'POST', htu: tokenUrl(), jti: randomUUID(), iat: now })}.`;
  const replayed = await proof(key, 'POST', tokenUrl());
  assert.equal((await ccToken(replayed)).status, 200);
  const cases: Record<string, string> = {
    'replayed jti': replayed,
    'another URL': await proof(key, 'POST', `${server.url}/oauth/revocation`),
    'another method': await proof(key, 'GET', tokenUrl()),
    'iat 5 minutes old': await proof(key, 'POST', tokenUrl(), { iat: now - 300 }),
    'iat 5 minutes ahead': await proof(key, 'POST', tokenUrl(), { iat: now + 300 }),
    'no jti': await proof(key, 'POST', tokenUrl(), { jti: undefined }),
    'typ JWT': await proof(key, 'POST', tokenUrl(), {}, { typ: 'JWT' }),
    'private key in jwk': await proof(key, 'POST', tokenUrl(), {}, { jwk: await exportJWK(key.privateKey) }),
    'signed by another key than its jwk': await proof(key, 'POST', tokenUrl(), {}, { jwk: await exportJWK(other.publicKey) }),
    'alg none': unsigned,
    HS256: hs,
    'not a JWT': 'not-a-jwt',
  };
  const before = await countTokens();
  for (const [name, p] of Object.entries(cases)) {
    const r = await ccToken(p);
    assert.equal(r.status, 400, `${name}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.error, 'invalid_dpop_proof', name);
  }
  // Two DPoP headers.
  const res = await server.fetch('/oauth/token', {
    method: 'POST',
    headers: [['accept', 'application/json'], ['content-type', 'application/x-www-form-urlencoded'], ['authorization', basic('rp', rp.client_secret!)], ['dpop', await proof(key, 'POST', tokenUrl())], ['dpop', await proof(key, 'POST', tokenUrl())]],
    body: 'grant_type=client_credentials',
  });
  assert.equal(res.status, 400);
  assert.equal(((await res.json()) as { error: string }).error, 'invalid_dpop_proof');
  assert.equal(await countTokens(), before, 'nothing issued');
});

test('the resource API refuses a bad proof or a misused token with 401 and a DPoP challenge', async () => {
  const key = await es256();
  const other = await es256();
  const issued = await ccToken(await proof(key, 'POST', tokenUrl()));
  const token = issued.body.access_token as string;
  const bearerToken = (await ccToken()).body.access_token as string;
  const now = Math.floor(Date.now() / 1000);
  const good = () => proof(key, 'GET', zoosUrl(), { ath: ath(token) });
  assert.equal((await zoos(`DPoP ${token}`, await good())).status, 200);

  const replayed = await good();
  assert.equal((await zoos(`DPoP ${token}`, replayed)).status, 200);
  const cases: Record<string, [string, string | string[] | undefined]> = {
    'replayed jti': [`DPoP ${token}`, replayed],
    'no proof': [`DPoP ${token}`, undefined],
    'another URL': [`DPoP ${token}`, await proof(key, 'GET', `${server.url}/v1/animals`, { ath: ath(token) })],
    'another method': [`DPoP ${token}`, await proof(key, 'POST', zoosUrl(), { ath: ath(token) })],
    'iat 5 minutes old': [`DPoP ${token}`, await proof(key, 'GET', zoosUrl(), { ath: ath(token), iat: now - 300 })],
    'iat 5 minutes ahead': [`DPoP ${token}`, await proof(key, 'GET', zoosUrl(), { ath: ath(token), iat: now + 300 })],
    'another key than the bound one': [`DPoP ${token}`, await proof(other, 'GET', zoosUrl(), { ath: ath(token) })],
    'no ath': [`DPoP ${token}`, await proof(key, 'GET', zoosUrl())],
    'a wrong ath': [`DPoP ${token}`, await proof(key, 'GET', zoosUrl(), { ath: ath(bearerToken) })],
    'private key in jwk': [`DPoP ${token}`, await proof(key, 'GET', zoosUrl(), { ath: ath(token) }, { jwk: await exportJWK(key.privateKey) })],
    'malformed proof': [`DPoP ${token}`, 'a.b'],
    'two proofs': [`DPoP ${token}`, [await good(), await good()]],
  };
  for (const [name, [authorization, dpop]] of Object.entries(cases)) {
    const r = await zoos(authorization, dpop);
    assert.equal(r.status, 401, `${name}: ${r.body}`);
    assert.match(r.challenge, /^DPoP .*error="invalid_dpop_proof"/, name);
  }
  // The token misused: as Bearer; a bearer token with the DPoP scheme; a malformed token.
  const misuses: Record<string, [string, string | undefined]> = {
    'DPoP token as Bearer': [`Bearer ${token}`, undefined],
    'DPoP token as Bearer, with a proof': [`Bearer ${token}`, await good()],
    'bearer token with the DPoP scheme': [`DPoP ${bearerToken}`, await proof(key, 'GET', zoosUrl(), { ath: ath(bearerToken) })],
    'malformed DPoP credentials': ['DPoP', await good()],
  };
  for (const [name, [authorization, dpop]] of Object.entries(misuses)) {
    const r = await zoos(authorization, dpop);
    assert.equal(r.status, 401, `${name}: ${r.body}`);
    assert.match(r.challenge, /DPoP .*error="invalid_token"|error="invalid_request"/, name);
  }
});

test('htu is the configured URL: a proof naming the Host header sent instead is refused', async () => {
  const key = await es256();
  const token = (await ccToken(await proof(key, 'POST', tokenUrl()))).body.access_token as string;
  const res = await server.request('/v1/zoos', {
    headers: { accept: 'application/json', host: 'evil.example', authorization: `DPoP ${token}`, dpop: await proof(key, 'GET', 'https://evil.example/v1/zoos', { ath: ath(token) }) },
  });
  assert.equal(res.statusCode, 401);
  // Normalized: default port, case of scheme and host.
  const url = new URL(zoosUrl());
  const shouty = `HTTPS://${url.host.toUpperCase()}${url.pathname}`;
  assert.equal((await zoos(`DPoP ${token}`, await proof(key, 'GET', shouty, { ath: ath(token) }))).status, 200);
});

test('a MAC client, or one of the implicit grant, cannot be registered --dpop', async () => {
  const mac = await server.cli(['client', 'add', 'mac-dpop', '--grant', 'client_credentials', '--token-type', 'mac', '--dpop']);
  assert.equal(mac.status, 1);
  assert.match(mac.stderr, /MAC/);
  const implicit = await server.cli(['client', 'add', 'implicit-dpop', '--grant', 'implicit', '--redirect-uri', CB, '--dpop']);
  assert.equal(implicit.status, 1);
  assert.match(implicit.stderr, /implicit/);
});

test('the admin API sets and shows dpop_bound_access_tokens', async () => {
  const bot = await addClient(server, 'ops-bot', ['--grant', 'client_credentials', '--scope', 'admin']);
  const t = await post(server, 'token', { grant_type: 'client_credentials', scope: 'admin' }, { auth: basic(bot.client_id, bot.client_secret!) });
  const admin = { authorization: `Bearer ${t.body.access_token}` };
  const created = await server.json('POST', '/admin/v1/clients', { client_id: 'api-dpop', grant_types: ['client_credentials'], dpop_bound_access_tokens: true }, admin);
  assert.equal(created.status, 201, created.text);
  assert.equal(created.body.dpop_bound_access_tokens, true);
  const changed = await server.json('PATCH', '/admin/v1/clients/api-dpop', { dpop_bound_access_tokens: false }, admin);
  assert.equal(changed.body.dpop_bound_access_tokens, false);
  assert.equal((await ccToken(undefined, 'api-dpop', created.body.client_secret)).status, 200);
});
