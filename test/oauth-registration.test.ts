// Dynamic client registration (RFC 7591) and its management (RFC 7592) at {auth_url}/register:
// oauth4webapi registers a public and a confidential client that then run their flows; bad
// metadata is refused with the RFC's errors and makes nothing; the policies (auth.registration
// closed, token, open), the initial access tokens and the registration access tokens, seen as an
// attacker would try them; the throttle per IP.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as oauth from 'oauth4webapi';
import * as openid from 'openid-client';
import { startApp, type InProcessApp } from './helpers/app.js';
import { createPgDatabase, pgAvailable } from './helpers/server.js';
import { CookieJar, addUser, decide, signIn } from './helpers/oauth.js';
import { findClient, listClients, updateClient } from '../src/authserver/model/clients.js';
import { createRegistrationToken, revokeRegistrationToken } from '../src/authserver/model/registration.js';

const CB = 'https://rp.example/callback';

const opts = (server: InProcessApp) => ({ [oauth.customFetch]: (url: string, init: RequestInit) => server.fetch(url, init as object) as unknown as Promise<Response> }) as const;

async function discover(server: InProcessApp): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(server.url);
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...opts(server) }));
}

const register = (server: InProcessApp, body: unknown, headers: Record<string, string> = {}) => server.json('POST', '/oauth/register', body, headers);

async function clientCount(server: InProcessApp): Promise<number> {
  return (await listClients(server.ctx)).length;
}

describe('open registration', () => {
  let server: InProcessApp;
  let as: oauth.AuthorizationServer;
  before(async () => {
    server = await startApp({ logLevel: 'info', config: { auth: { registration: 'open' } } });
    await addUser(server, 'erin', 'erin-password-1');
    as = await discover(server);
  });
  after(() => server.cleanup());

  test('the metadata names the registration endpoint', () => {
    assert.equal(as.registration_endpoint, `${server.url}/oauth/register`);
  });

  test('oauth4webapi registers a public client, which runs authorization code + PKCE; it is not verified', async () => {
    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: [CB], client_name: 'Native App', token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], scope: 'zoos:read zoos:write' }, opts(server)),
    );
    assert.match(registered.client_id, /^reg-[A-Za-z0-9_-]{22}$/);
    assert.equal(registered.client_secret, undefined);
    assert.equal(registered.token_endpoint_auth_method, 'none');
    assert.deepEqual(registered.response_types, ['code']);
    assert.equal(typeof registered.client_id_issued_at, 'number');
    assert.ok(registered.registration_access_token);
    assert.equal(registered.registration_client_uri, `${server.url}/oauth/register/${registered.client_id}`);
    const stored = await findClient(server.ctx, registered.client_id);
    assert.equal(stored?.verified, false);
    assert.equal(stored?.public, true);

    const client: oauth.Client = { client_id: registered.client_id };
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    for (const [k, v] of Object.entries({ client_id: client.client_id, redirect_uri: CB, response_type: 'code', scope: 'zoos:read', state, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' })) url.searchParams.set(k, v);
    const jar = new CookieJar();
    const consent = await signIn(server, jar, url.href, 'erin', 'erin-password-1');
    assert.match(consent.html, /has not verified this application/, 'the consent page says the registered client is not verified');
    const redirect = await decide(server, jar, consent);
    const params = oauth.validateAuthResponse(as, client, new URL(redirect.location!), state);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, CB, verifier, opts(server)));
    assert.equal(tokens.scope, 'zoos:read');
    assert.ok(tokens.refresh_token);
  });

  test('a public registered client must use PKCE', async () => {
    const { body } = await register(server, { redirect_uris: [CB], token_endpoint_auth_method: 'none' });
    const res = await server.fetch(`/oauth/authorize?response_type=code&client_id=${body.client_id}&redirect_uri=${encodeURIComponent(CB)}&state=s`, { headers: { accept: 'text/html' } });
    const location = res.headers.get('location') ?? '';
    assert.match(location, /error=invalid_request/);
    assert.match(decodeURIComponent(location), /code_challenge/);
  });

  test('attack: a client cannot register itself for client_credentials, password or implicit (POST or PUT); nothing made', async () => {
    const before = await clientCount(server);
    for (const body of [
      { grant_types: ['client_credentials'] },
      { grant_types: ['client_credentials'], token_endpoint_auth_method: 'client_secret_post', scope: 'orders:read' },
      { redirect_uris: [CB], grant_types: ['authorization_code', 'password'] },
      { redirect_uris: [CB], grant_types: ['implicit'], response_types: ['token'] },
    ]) {
      const res = await register(server, body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error, 'invalid_client_metadata');
      assert.match(res.body.error_description, /^grant_types: .* cannot be registered \(registrable: authorization_code, refresh_token, urn:ietf:params:oauth:grant-type:device_code\)/);
    }
    assert.equal(await clientCount(server), before);
    const { body: made } = await register(server, { redirect_uris: [CB] });
    const put = await server.json('PUT', new URL(made.registration_client_uri).pathname, { client_id: made.client_id, redirect_uris: [CB], grant_types: ['authorization_code', 'client_credentials'] }, { authorization: `Bearer ${made.registration_access_token}` });
    assert.equal(put.status, 400);
    assert.equal(put.body.error, 'invalid_client_metadata');
    assert.ok('grant_types' in put.body.detail);
    assert.deepEqual((await findClient(server.ctx, made.client_id, true))?.grantTypes, ['authorization_code']);
    const device = await register(server, { grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'], token_endpoint_auth_method: 'none' });
    assert.equal(device.status, 201, JSON.stringify(device.body));
  });

  test('oauth4webapi registers a confidential client (client_secret_post); widened by the operator to client_credentials, it gets a token', async () => {
    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(as, { client_name: 'Backend', redirect_uris: [CB], token_endpoint_auth_method: 'client_secret_post', scope: 'orders:read', contacts: ['ops@example.org'], software_id: 'ignored' }, opts(server)),
    );
    assert.ok(registered.client_secret && String(registered.client_secret).length >= 43);
    assert.equal(registered.client_secret_expires_at, 0);
    assert.deepEqual(registered.contacts, ['ops@example.org']);
    assert.deepEqual(registered.response_types, ['code']);
    assert.equal(registered.software_id, undefined, 'unknown metadata is ignored, not echoed');
    await updateClient(server.ctx, registered.client_id, { grantTypes: ['authorization_code', 'client_credentials'] });
    const client: oauth.Client = { client_id: registered.client_id };
    const tokens = await oauth.processClientCredentialsResponse(as, client, await oauth.clientCredentialsGrantRequest(as, client, oauth.ClientSecretPost(String(registered.client_secret)), { scope: 'orders:read' }, opts(server)));
    assert.equal(tokens.scope, 'orders:read');
  });

  test('a confidential client with the defaults (client_secret_basic, authorization_code) runs the code flow', async () => {
    const { status, body } = await register(server, { redirect_uris: [CB] });
    assert.equal(status, 201);
    assert.equal(body.token_endpoint_auth_method, 'client_secret_basic');
    assert.deepEqual(body.grant_types, ['authorization_code']);
    assert.equal(body.require_pushed_authorization_requests, undefined);
    const par = await register(server, { redirect_uris: [CB], require_pushed_authorization_requests: true });
    assert.equal(par.body.require_pushed_authorization_requests, true);
    assert.equal((await findClient(server.ctx, par.body.client_id))?.requirePar, true);
    const client: oauth.Client = { client_id: body.client_id };
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(as.authorization_endpoint!);
    for (const [k, v] of Object.entries({ client_id: client.client_id, redirect_uri: CB, response_type: 'code', scope: 'zoos:read', state: 'st', code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' })) url.searchParams.set(k, v);
    const jar = new CookieJar();
    const redirect = await decide(server, jar, await signIn(server, jar, url.href, 'erin', 'erin-password-1'));
    const params = oauth.validateAuthResponse(as, client, new URL(redirect.location!), 'st');
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic(body.client_secret), params, CB, verifier, opts(server)));
    assert.ok(tokens.access_token);
  });

  const refusals: [string, unknown, string, string][] = [
    ['an http redirect URI (not loopback)', { redirect_uris: ['http://rp.example/cb'] }, 'invalid_redirect_uri', 'redirect_uris'],
    ['a fragment in a redirect URI', { redirect_uris: ['https://rp.example/cb#x'] }, 'invalid_redirect_uri', 'redirect_uris'],
    ['admin in scope', { redirect_uris: [CB], scope: 'zoos:read admin' }, 'invalid_client_metadata', 'scope'],
    ['an unknown scope', { redirect_uris: [CB], scope: 'nope:read' }, 'invalid_client_metadata', 'scope'],
    ['an unknown grant', { redirect_uris: [CB], grant_types: ['authorization_code', 'urn:example:magic'] }, 'invalid_client_metadata', 'grant_types'],
    ['private_key_jwt', { redirect_uris: [CB], token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata', 'token_endpoint_auth_method'],
    ['a public client with client_credentials', { grant_types: ['client_credentials'], response_types: [], token_endpoint_auth_method: 'none' }, 'invalid_client_metadata', 'grant_types'],
    ['the code grant without a redirect URI', {}, 'invalid_redirect_uri', 'redirect_uris'],
    ['a response type without its grant', { redirect_uris: [CB], response_types: ['code', 'token'] }, 'invalid_client_metadata', 'response_types'],
    ['redirect_uris not an array', { redirect_uris: CB }, 'invalid_redirect_uri', 'redirect_uris'],
    ['a client name of 101 characters', { redirect_uris: [CB], client_name: 'x'.repeat(101) }, 'invalid_client_metadata', 'client_name'],
    ['a javascript: client_uri', { redirect_uris: [CB], client_uri: 'javascript:alert(1)' }, 'invalid_client_metadata', 'client_uri'],
    ['contacts not strings', { redirect_uris: [CB], contacts: [1] }, 'invalid_client_metadata', 'contacts'],
    ['a response type __proto__', { redirect_uris: [CB], response_types: ['__proto__'] }, 'invalid_client_metadata', 'response_types: __proto__ is not one of code, token'],
    ['a response type constructor', { redirect_uris: [CB], response_types: ['code', 'constructor'] }, 'invalid_client_metadata', 'response_types: constructor is not one of code, token'],
    ['21 redirect URIs', { redirect_uris: Array.from({ length: 21 }, (_, i) => `${CB}${i}`) }, 'invalid_redirect_uri', 'redirect_uris'],
    ['a redirect URI of 2,001 characters', { redirect_uris: [`${CB}?${'a'.repeat(2001 - CB.length - 1)}`] }, 'invalid_redirect_uri', 'redirect_uris'],
    ['a client_uri of 2,001 characters', { redirect_uris: [CB], client_uri: `https://${'a'.repeat(1985)}.example/` }, 'invalid_client_metadata', 'client_uri'],
    ['11 contacts', { redirect_uris: [CB], contacts: Array.from({ length: 11 }, (_, i) => `c${i}@example.org`) }, 'invalid_client_metadata', 'contacts'],
    ['require_pushed_authorization_requests not a boolean', { redirect_uris: [CB], require_pushed_authorization_requests: 'yes' }, 'invalid_client_metadata', 'require_pushed_authorization_requests'],
  ];
  for (const [what, body, error, field] of refusals)
    test(`refused, nothing made: ${what}`, async () => {
      const before = await clientCount(server);
      const res = await register(server, body);
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.error, error);
      const [name] = field.split(':');
      assert.match(res.body.error_description, new RegExp(`^${field.includes(':') ? field.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : `${field}: `}`));
      assert.ok(name in res.body.detail, JSON.stringify(res.body.detail));
      assert.equal(await clientCount(server), before);
    });

  test('attack: a body over 16 KiB is 413 (POST and PUT), nothing made; 20 redirect URIs of 600 characters fit', async () => {
    const before = await clientCount(server);
    const big = await register(server, { redirect_uris: Array.from({ length: 15 }, (_, i) => `${CB}${i}?${'a'.repeat(1500)}`) });
    assert.equal(big.status, 413);
    assert.equal(await clientCount(server), before);
    const fits = await register(server, { redirect_uris: Array.from({ length: 20 }, (_, i) => `${CB}${i}?${'a'.repeat(600)}`), client_uri: `${CB}?${'b'.repeat(1900)}` });
    assert.equal(fits.status, 201, JSON.stringify(fits.body));
    const put = await server.json('PUT', new URL(fits.body.registration_client_uri).pathname, { client_id: fits.body.client_id, redirect_uris: [CB], client_name: 'x'.repeat(17_000) }, { authorization: `Bearer ${fits.body.registration_access_token}` });
    assert.equal(put.status, 413);
  });

  test('refused, nothing made: malformed JSON, a JSON array, a form body, text', async () => {
    const before = await clientCount(server);
    const post = (body: string, type: string) => server.fetch('/oauth/register', { method: 'POST', headers: { 'content-type': type, accept: 'application/json' }, body });
    for (const [body, type] of [
      ['{"redirect_uris": [', 'application/json'],
      ['[]', 'application/json'],
      [`redirect_uris=${encodeURIComponent(CB)}`, 'application/x-www-form-urlencoded'],
      [JSON.stringify({ redirect_uris: [CB] }), 'text/plain'],
    ]) {
      const res = await post(body, type);
      assert.equal(res.status, 400, `${type} ${body}`);
      assert.equal((await res.json()).error, 'invalid_request');
    }
    assert.equal(await clientCount(server), before);
  });

  test('RFC 7592: GET reads, PUT replaces under the same rules, DELETE removes the client and its tokens', async () => {
    const { body: made } = await register(server, { redirect_uris: [CB], client_name: 'Mine', grant_types: ['authorization_code'], scope: 'orders:read' });
    // The operator gives it client_credentials (not registrable); its own PUT may keep that grant.
    await updateClient(server.ctx, made.client_id, { grantTypes: ['authorization_code', 'client_credentials'] });
    const auth = { authorization: `Bearer ${made.registration_access_token}` };
    const uri = new URL(made.registration_client_uri).pathname;
    const read = await server.json('GET', uri, undefined, auth);
    assert.equal(read.status, 200);
    assert.equal(read.headers.get('cache-control'), 'no-store');
    assert.equal(read.body.client_name, 'Mine');
    assert.equal(read.body.client_secret, undefined, 'only its hash is kept');
    assert.equal(read.body.registration_access_token, made.registration_access_token);

    // The operator verifies it; a change by the client takes the verification back.
    await updateClient(server.ctx, made.client_id, { verified: true });
    const put = await server.json('PUT', uri, { client_id: made.client_id, redirect_uris: ['https://rp.example/other'], grant_types: ['authorization_code', 'client_credentials'], scope: 'orders:read', contacts: ['me@example.org'] }, auth);
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.deepEqual(put.body.redirect_uris, ['https://rp.example/other']);
    assert.equal(put.body.client_name, made.client_id, 'omitted: back to its default');
    assert.deepEqual(put.body.contacts, ['me@example.org']);
    assert.equal((await findClient(server.ctx, made.client_id, true))?.verified, false);

    const badPut = await server.json('PUT', uri, { client_id: made.client_id, redirect_uris: ['http://evil.example/cb'] }, auth);
    assert.equal(badPut.status, 400);
    assert.equal(badPut.body.error, 'invalid_redirect_uri');
    const idPut = await server.json('PUT', uri, { client_id: 'someone-else', redirect_uris: [CB] }, auth);
    assert.equal(idPut.status, 400);
    assert.equal(idPut.body.error, 'invalid_client_metadata');
    const secretPut = await server.json('PUT', uri, { client_id: made.client_id, client_secret: 'x'.repeat(43), redirect_uris: [CB], grant_types: ['authorization_code', 'client_credentials'] }, auth);
    assert.equal(secretPut.status, 400);
    assert.equal(secretPut.body.detail.client_secret, 'is not the current secret');
    const samePut = await server.json('PUT', uri, { client_id: made.client_id, client_secret: made.client_secret, redirect_uris: ['https://rp.example/other'], grant_types: ['authorization_code', 'client_credentials'], scope: 'orders:read' }, auth);
    assert.equal(samePut.status, 200, 'the current secret may be sent back');
    const typePut = await server.json('PUT', uri, { client_id: made.client_id, redirect_uris: [CB], token_endpoint_auth_method: 'none' }, auth);
    assert.equal(typePut.status, 400);
    assert.equal(typePut.body.detail.token_endpoint_auth_method !== undefined, true);
    assert.deepEqual((await findClient(server.ctx, made.client_id, true))?.redirectUris, ['https://rp.example/other'], 'a refused PUT changes nothing');

    const token = await server.json('POST', '/oauth/token', { grant_type: 'client_credentials', client_id: made.client_id, client_secret: made.client_secret, scope: 'orders:read' });
    assert.equal(token.status, 200);
    const del = await server.fetch(uri, { method: 'DELETE', headers: auth });
    assert.equal(del.status, 204);
    assert.equal(await findClient(server.ctx, made.client_id, true), null);
    const introspected = await server.json('GET', '/v1/orders', undefined, { authorization: `Bearer ${token.body.access_token}` });
    assert.equal(introspected.status, 401, 'its tokens ended with it');
    assert.equal((await server.json('GET', uri, undefined, auth)).status, 401, 'its registration access token ended with it');
  });

  test('attack: a client\'s PUT cannot undo the operator\'s restrictions (scope, PAR, DPoP) nor widen its grants or scope', async () => {
    const { body: made } = await register(server, { redirect_uris: [CB], grant_types: ['authorization_code'] });
    await updateClient(server.ctx, made.client_id, { scope: 'zoos:read', requirePar: true, dpopBound: true });
    const uri = new URL(made.registration_client_uri).pathname;
    const auth = { authorization: `Bearer ${made.registration_access_token}` };
    const omitted = await server.json('PUT', uri, { client_id: made.client_id, redirect_uris: [CB] }, auth);
    assert.equal(omitted.status, 200, JSON.stringify(omitted.body));
    let stored = await findClient(server.ctx, made.client_id, true);
    assert.equal(stored?.scope, 'zoos:read', 'omitted: the current scope stays, not every scope');
    assert.equal(stored?.requirePar, true);
    assert.equal(stored?.dpopBound, true);
    const off = await server.json('PUT', uri, { client_id: made.client_id, redirect_uris: [CB], require_pushed_authorization_requests: false, dpop_bound_access_tokens: false }, auth);
    assert.equal(off.status, 200);
    stored = await findClient(server.ctx, made.client_id, true);
    assert.equal(stored?.requirePar, true, 'PAR stays required');
    assert.equal(stored?.dpopBound, true, 'DPoP stays required');
    for (const [body, field] of [
      [{ scope: 'zoos:read zoos:write' }, 'scope'],
      [{ grant_types: ['authorization_code', 'refresh_token'] }, 'grant_types'],
    ] as const) {
      const res = await server.json('PUT', uri, { client_id: made.client_id, redirect_uris: [CB], ...body }, auth);
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.error, 'invalid_client_metadata');
      assert.match(res.body.error_description, new RegExp(`^${field}: .* is more than this client has`));
    }
    stored = await findClient(server.ctx, made.client_id, true);
    assert.equal(stored?.scope, 'zoos:read');
    assert.deepEqual(stored?.grantTypes, ['authorization_code']);
    const narrower = await server.json('PUT', uri, { client_id: made.client_id, redirect_uris: [CB], scope: 'zoos:read' }, auth);
    assert.equal(narrower.status, 200, 'within what it has: accepted');
  });

  test('attack: a self-registered client\'s client_uri on another host (accounts.google.com) is not shown on the consent page; on its redirect URI\'s host it is', async () => {
    const consentFor = async (clientUri: string, redirect: string) => {
      const { body } = await register(server, { redirect_uris: [redirect], token_endpoint_auth_method: 'none', client_uri: clientUri, client_name: 'Look-alike' });
      const url = `/oauth/authorize?${new URLSearchParams({ client_id: body.client_id, redirect_uri: redirect, response_type: 'code', scope: 'zoos:read', state: 's', code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()), code_challenge_method: 'S256' })}`;
      return (await signIn(server, new CookieJar(), `${server.url}${url}`, 'erin', 'erin-password-1')).html;
    };
    const spoof = await consentFor('https://accounts.google.com/', CB);
    assert.match(spoof, /Look-alike/);
    assert.doesNotMatch(spoof, /Home page|accounts\.google\.com/);
    const own = await consentFor('https://rp.example/about', CB);
    assert.match(own, /Home page: <strong class="client">rp\.example<\/strong>/);
    // An operator's client keeps its home page as the operator set it.
    await server.cli(['client', 'add', 'operator-home', '--public', '--grant', 'authorization_code', '--redirect-uri', CB, '--uri', 'https://elsewhere.example/']);
    const url = `/oauth/authorize?${new URLSearchParams({ client_id: 'operator-home', redirect_uri: CB, response_type: 'code', scope: 'zoos:read', state: 's', code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()), code_challenge_method: 'S256' })}`;
    assert.match((await signIn(server, new CookieJar(), `${server.url}${url}`, 'erin', 'erin-password-1')).html, /Home page: <strong class="client">elsewhere\.example<\/strong>/);
  });

  test('a browser app (an MCP client in a page) may register itself and manage its registration from any origin (CORS, no credentials)', async () => {
    const origin = 'https://mcp-client.example';
    const preflight = await server.fetch('/oauth/register', { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, authorization' } });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /Authorization/i);
    assert.equal(preflight.headers.get('access-control-allow-credentials'), null);
    const made = await server.fetch('/oauth/register', { method: 'POST', headers: { origin, 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ redirect_uris: [CB], token_endpoint_auth_method: 'none' }) });
    assert.equal(made.status, 201);
    assert.equal(made.headers.get('access-control-allow-origin'), '*');
    assert.match(made.headers.get('access-control-expose-headers') ?? '', /Location/);
    const body = await made.json();
    const manage = await server.fetch(new URL(body.registration_client_uri).pathname, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'PUT', 'access-control-request-headers': 'authorization, content-type' } });
    assert.equal(manage.status, 204);
    assert.match(manage.headers.get('access-control-allow-methods') ?? '', /PUT/);
  });

  test('RFC 7592 attacks: no token, a wrong one, another client\'s, an operator-made client → 401 invalid_token, nothing changed', async () => {
    const { body: a } = await register(server, { redirect_uris: [CB] });
    const { body: b } = await register(server, { redirect_uris: [CB] });
    await server.cli(['client', 'add', 'operator-made', '--grant', 'client_credentials']);
    const uriA = new URL(a.registration_client_uri).pathname;
    for (const [uri, headers] of [
      [uriA, {}],
      [uriA, { authorization: 'Bearer nope' }],
      [uriA, { authorization: `Bearer ${b.registration_access_token}` }],
      [uriA, { authorization: `Basic ${Buffer.from(`${a.client_id}:${a.client_secret}`).toString('base64')}` }],
      ['/oauth/register/operator-made', { authorization: `Bearer ${a.registration_access_token}` }],
      ['/oauth/register/nobody', { authorization: `Bearer ${a.registration_access_token}` }],
    ] as [string, Record<string, string>][]) {
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const res = await server.json(method, uri, method === 'PUT' ? { client_id: a.client_id, redirect_uris: ['https://evil.example/cb'] } : undefined, headers);
        assert.equal(res.status, 401, `${method} ${uri} ${JSON.stringify(headers)}`);
        assert.equal(res.body.error, 'invalid_token');
        assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
      }
    }
    assert.deepEqual((await findClient(server.ctx, a.client_id, true))?.redirectUris, [CB]);
    assert.ok(await findClient(server.ctx, 'operator-made', true));
  });

  test('the audit line of a registration names it and the IP', async () => {
    const { body } = await register(server, { redirect_uris: [CB] });
    const line = server.output().split('\n').find((l) => l.includes('client.registered') && l.includes(body.client_id));
    assert.ok(line, 'an audit line');
    assert.equal(JSON.parse(line!).actor, 'registration');
    assert.equal(JSON.parse(line!).ip, '127.0.0.1');
  });
});

describe('closed registration (the default)', () => {
  let server: InProcessApp;
  before(async () => {
    server = await startApp({ config: { auth: { registration: 'closed' } } });
  });
  after(() => server.cleanup());

  test('not in the metadata; the endpoint answers 404 and makes nothing', async () => {
    const meta = await server.json('GET', '/.well-known/oauth-authorization-server');
    assert.equal(meta.body.registration_endpoint, undefined);
    const before = await clientCount(server);
    const res = await register(server, { redirect_uris: [CB] });
    assert.equal(res.status, 404);
    assert.equal(await clientCount(server), before);
    assert.equal((await server.json('GET', '/oauth/register/demo', undefined, { authorization: 'Bearer x' })).status, 404);
  });
});

describe('registration with an initial access token', () => {
  let server: InProcessApp;
  before(async () => {
    server = await startApp({ logLevel: 'info', config: { auth: { registration: 'token' } } });
  });
  after(() => server.cleanup());

  const refused = async (headers: Record<string, string>, why: string) => {
    const before = await clientCount(server);
    const res = await register(server, { redirect_uris: [CB] }, headers);
    assert.equal(res.status, 401, why);
    assert.equal(res.body.error, 'invalid_token', why);
    assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/, why);
    assert.equal(await clientCount(server), before, why);
  };

  test('without, with a wrong, a forged, an expired, a used-up and a revoked token: 401 invalid_token, nothing made', async () => {
    await refused({}, 'no token');
    await refused({ authorization: 'Bearer nope' }, 'unknown');
    const { token } = await createRegistrationToken(server.ctx, {}, null);
    await refused({ authorization: `Bearer ${token.slice(0, token.indexOf('.'))}.${'A'.repeat(43)}` }, 'right id, wrong secret');
    const expired = await createRegistrationToken(server.ctx, { ttl: 60 }, null, Date.now() - 61_000);
    await refused({ authorization: `Bearer ${expired.token}` }, 'expired');
    const ok = await register(server, { redirect_uris: [CB] }, { authorization: `Bearer ${token}` });
    assert.equal(ok.status, 201, 'single use: the first registration');
    await refused({ authorization: `Bearer ${token}` }, 'used up');
    const revoked = await createRegistrationToken(server.ctx, { uses: 3 }, null);
    assert.equal(await revokeRegistrationToken(server.ctx, revoked.registrationToken.id), true);
    await refused({ authorization: `Bearer ${revoked.token}` }, 'revoked');
  });

  test('a token of N uses makes N clients, even raced; a bad registration does not spend a use', async () => {
    const { token } = await createRegistrationToken(server.ctx, { uses: 2 }, null);
    const auth = { authorization: `Bearer ${token}` };
    assert.equal((await register(server, { redirect_uris: ['http://evil.example/'] }, auth)).status, 400);
    const before = await clientCount(server);
    const raced = await Promise.all(Array.from({ length: 5 }, () => register(server, { redirect_uris: [CB] }, auth)));
    assert.deepEqual(raced.map((r) => r.status).sort(), [201, 201, 401, 401, 401]);
    assert.equal(await clientCount(server), before + 2);
  });

  test('openid-client registers a confidential client with an initial access token; widened by the operator, it gets a client_credentials token', async () => {
    const { token } = await createRegistrationToken(server.ctx, {}, null);
    const inProcess = ((url: string, init: RequestInit) => server.fetch(url, init as object)) as unknown as openid.CustomFetch;
    const config = await openid.dynamicClientRegistration(new URL(server.url), { client_name: 'Reporter', redirect_uris: [CB], scope: 'orders:read' }, undefined, { initialAccessToken: token, [openid.customFetch]: inProcess } as openid.DynamicClientRegistrationRequestOptions);
    config[openid.customFetch] = inProcess;
    assert.match(config.clientMetadata().client_id, /^reg-/);
    await updateClient(server.ctx, config.clientMetadata().client_id, { grantTypes: ['authorization_code', 'client_credentials'] });
    const tokens = await openid.clientCredentialsGrant(config, { scope: 'orders:read' });
    assert.equal(tokens.scope, 'orders:read');
  });

  test('the audit line of a token registration names the token', async () => {
    const { token, registrationToken } = await createRegistrationToken(server.ctx, {}, null);
    const res = await register(server, { redirect_uris: [CB] }, { authorization: `Bearer ${token}` });
    assert.equal(res.status, 201);
    const line = server.output().split('\n').find((l) => l.includes('client.registered') && l.includes(res.body.client_id));
    assert.equal(JSON.parse(line!).registration_token_id, registrationToken.id);
  });
});

describe('throttle', () => {
  let server: InProcessApp;
  before(async () => {
    server = await startApp({ config: { auth: { registration: 'open' } } });
  });
  after(() => server.cleanup());

  test('the 21st registration from one IP in an hour is 429 and makes nothing; one refused for its metadata does not count', async () => {
    for (let i = 0; i < 5; i++) assert.equal((await register(server, { redirect_uris: ['http://evil.example/'] })).status, 400);
    for (let i = 0; i < 20; i++) assert.equal((await register(server, { redirect_uris: [CB] })).status, 201, `registration ${i + 1}`);
    const before = await clientCount(server);
    const res = await register(server, { redirect_uris: [CB] });
    assert.equal(res.status, 429);
    assert.equal(res.body.error, 'too_many_requests');
    assert.ok(Number(res.headers.get('retry-after')) > 0);
    assert.equal(await clientCount(server), before);
  });
});

describe('on PostgreSQL', { skip: !pgAvailable && 'needs PostgreSQL' }, () => {
  let server: InProcessApp;
  let database: { url: string; drop(): Promise<void> };
  before(async () => {
    database = await createPgDatabase();
    server = await startApp({ database: database.url, config: { auth: { registration: 'token' } } });
  });
  after(async () => {
    await server?.cleanup();
    await database?.drop();
  });

  test('a token of 2 uses raced by 5 registrations makes 2 clients; the registration access token manages its own client only', async () => {
    const { token } = await createRegistrationToken(server.ctx, { uses: 2 }, null);
    const raced = await Promise.all(Array.from({ length: 5 }, () => register(server, { redirect_uris: [CB], contacts: ['a@example.org'] }, { authorization: `Bearer ${token}` })));
    assert.deepEqual(raced.map((r) => r.status).sort(), [201, 201, 401, 401, 401]);
    const [a, b] = raced.filter((r) => r.status === 201).map((r) => r.body);
    const read = await server.json('GET', `/oauth/register/${a.client_id}`, undefined, { authorization: `Bearer ${a.registration_access_token}` });
    assert.deepEqual(read.body.contacts, ['a@example.org']);
    assert.equal((await server.json('DELETE', `/oauth/register/${a.client_id}`, undefined, { authorization: `Bearer ${b.registration_access_token}` })).status, 401);
    assert.equal((await server.fetch(`/oauth/register/${a.client_id}`, { method: 'DELETE', headers: { authorization: `Bearer ${a.registration_access_token}` } })).status, 204);
    assert.equal(await findClient(server.ctx, a.client_id, true), null);
  });
});
