// Interoperability: a third-party OAuth client library (oauth4webapi) discovers gatehouse through
// RFC 8414 metadata and runs the authorization code + PKCE, client credentials, refresh,
// introspection and revocation flows against it. RFC 9207: every authorization response names the
// issuer (`iss`), and the library checks it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as oauth from 'oauth4webapi';
import { startApp, type InProcessApp } from './helpers/app.js';
import { CookieJar, addClient, addUser, authorizeUrl, decide, page, redirectParams, signIn, type RegisteredClient } from './helpers/oauth.js';

let server: InProcessApp;
let web: RegisteredClient;
let as: oauth.AuthorizationServer;
const CB = 'https://rp.example/callback';

// oauth4webapi lets the application supply fetch: this one is the in-process app's.
const trustingFetch = (url: string, init: RequestInit) => server.fetch(url, init as object) as unknown as Promise<Response>;
const opts = () => ({ [oauth.customFetch]: trustingFetch }) as const;

before(async () => {
  server = await startApp();
  await addUser(server, 'erin', 'erin-password-1');
  web = await addClient(server, 'rp', ['--grant', 'authorization_code', '--grant', 'refresh_token', '--grant', 'client_credentials', '--redirect-uri', CB, '--name', 'Relying Party']);
  await addClient(server, 'rp-implicit', ['--grant', 'implicit', '--grant', 'authorization_code', '--redirect-uri', CB]);
  const issuer = new URL(server.url);
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...opts() }));
});
after(async () => {
  await server.cleanup();
});

const client = (): oauth.Client => ({ client_id: 'rp' });
const auth = () => oauth.ClientSecretBasic(web.client_secret!);

test('discovery: oauth4webapi accepts the RFC 8414 metadata', () => {
  assert.equal(as.issuer, server.url);
  assert.equal(as.token_endpoint, `${server.url}/oauth/token`);
  assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
});

test('authorization code + PKCE, then refresh, introspection and revocation', async () => {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.searchParams.set('client_id', 'rp');
  url.searchParams.set('redirect_uri', CB);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', 'zoos:read zoos:write');
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set('code_challenge_method', 'S256');

  const jar = new CookieJar();
  const consent = await signIn(server, jar, url.href, 'erin', 'erin-password-1');
  const redirect = await decide(server, jar, consent, { scope: ['zoos:read'] });
  assert.equal(redirect.status, 302);

  const params = oauth.validateAuthResponse(as, client(), new URL(redirect.location!), state);
  const tokenResponse = await oauth.authorizationCodeGrantRequest(as, client(), auth(), params, CB, verifier, opts());
  const tokens = await oauth.processAuthorizationCodeResponse(as, client(), tokenResponse);
  assert.equal(tokens.token_type, 'bearer');
  assert.equal(tokens.scope, 'zoos:read');
  assert.ok(tokens.refresh_token);

  const refreshed = await oauth.processRefreshTokenResponse(as, client(), await oauth.refreshTokenGrantRequest(as, client(), auth(), tokens.refresh_token!, opts()));
  assert.ok(refreshed.access_token && refreshed.access_token !== tokens.access_token);
  assert.ok(refreshed.refresh_token && refreshed.refresh_token !== tokens.refresh_token);

  const info = await oauth.processIntrospectionResponse(as, client(), await oauth.introspectionRequest(as, client(), auth(), refreshed.access_token, opts()));
  assert.equal(info.active, true);
  assert.equal(info.scope, 'zoos:read');

  await oauth.processRevocationResponse(await oauth.revocationRequest(as, client(), auth(), refreshed.refresh_token!, opts()));
  const after = await oauth.processIntrospectionResponse(as, client(), await oauth.introspectionRequest(as, client(), auth(), refreshed.access_token, opts()));
  assert.equal(after.active, false);
});

test('client credentials with client_secret_post', async () => {
  const res = await oauth.clientCredentialsGrantRequest(as, client(), oauth.ClientSecretPost(web.client_secret!), { scope: 'orders:read' }, opts());
  const tokens = await oauth.processClientCredentialsResponse(as, client(), res);
  assert.equal(tokens.token_type, 'bearer');
  assert.equal(tokens.scope, 'orders:read');
  assert.equal(tokens.expires_in, 3600);
});

test('errors reach the library as RFC 6749 error responses', async () => {
  const res = await oauth.clientCredentialsGrantRequest(as, client(), oauth.ClientSecretBasic('wrong'), {}, opts());
  // A 401 with WWW-Authenticate surfaces as the challenge (scheme Basic); the body is still RFC 6749's.
  await assert.rejects(oauth.processClientCredentialsResponse(as, client(), res.clone()), (err: unknown) => {
    assert.ok(err instanceof oauth.WWWAuthenticateChallengeError, String(err));
    assert.equal(err.status, 401);
    assert.equal(err.cause[0].scheme, 'basic');
    return true;
  });
  assert.equal(((await res.json()) as { error: string }).error, 'invalid_client');
  const scope = await oauth.clientCredentialsGrantRequest(as, client(), auth(), { scope: 'penguins:read' }, opts());
  await assert.rejects(oauth.processClientCredentialsResponse(as, client(), scope), (err: unknown) => {
    assert.ok(err instanceof oauth.ResponseBodyError, String(err));
    assert.equal(err.error, 'invalid_scope');
    assert.equal(err.status, 400);
    return true;
  });
});

test('RFC 9207: every authorization response carries iss = the metadata issuer; oauth4webapi checks it', async () => {
  const metadata = await server.json('GET', '/.well-known/oauth-authorization-server');
  const issuer = metadata.body.issuer;
  assert.equal(issuer, server.url);
  assert.equal(metadata.body.authorization_response_iss_parameter_supported, true);
  assert.equal(as.authorization_response_iss_parameter_supported, true);
  const jar = new CookieJar();
  const url = (params: Record<string, string>) => authorizeUrl({ client_id: 'rp-implicit', redirect_uri: CB, state: 'st', ...params });

  // The code, in the query; oauth4webapi accepts it (and insists on iss, since the metadata says so).
  const consent = await signIn(server, jar, url({ response_type: 'code', scope: 'zoos:read' }), 'erin', 'erin-password-1');
  const code = await decide(server, jar, consent);
  assert.equal(redirectParams(code.location!).get('iss'), issuer);
  assert.ok(oauth.validateAuthResponse(as, { client_id: 'rp-implicit' }, new URL(code.location!), 'st').get('code'));
  // Without iss, or with another issuer, the library refuses the answer: the check is real.
  const stripped = new URL(code.location!);
  stripped.searchParams.delete('iss');
  assert.throws(() => oauth.validateAuthResponse(as, { client_id: 'rp-implicit' }, stripped, 'st'));
  const forged = new URL(code.location!);
  forged.searchParams.set('iss', 'https://attacker.example');
  assert.throws(() => oauth.validateAuthResponse(as, { client_id: 'rp-implicit' }, forged, 'st'));

  // The implicit grant: in the fragment.
  const implicitConsent = await signIn(server, jar, url({ response_type: 'token', scope: 'zoos:read' }), 'erin', 'erin-password-1');
  const implicit = await decide(server, jar, implicitConsent);
  const fragment = redirectParams(implicit.location!, 'fragment');
  assert.ok(fragment.get('access_token'));
  assert.equal(fragment.get('iss'), issuer);
  // Remembered consent (the implicit grant made one): the code without a page, iss as well.
  const remembered = await page(server, jar, url({ response_type: 'code', scope: 'zoos:read' }));
  assert.equal(remembered.status, 302);
  assert.equal(redirectParams(remembered.location!).get('iss'), issuer);

  // Errors sent to the redirect URI: the user's denial, a bad request, prompt=none without consent, without a session.
  const denyPage = await signIn(server, jar, url({ response_type: 'code', scope: 'zoos:read' }), 'erin', 'erin-password-1');
  const denied = await decide(server, jar, denyPage, { decision: 'deny' });
  assert.equal(redirectParams(denied.location!).get('error'), 'access_denied');
  assert.equal(redirectParams(denied.location!).get('iss'), issuer);
  assert.throws(
    () => oauth.validateAuthResponse(as, { client_id: 'rp-implicit' }, new URL(denied.location!), 'st'),
    (err: unknown) => err instanceof oauth.AuthorizationResponseError && err.error === 'access_denied',
  );
  const errors = [
    [await page(server, jar, url({ response_type: 'code', scope: 'penguins:read' })), 'query', 'invalid_scope'],
    [await page(server, jar, url({ response_type: 'token', scope: 'penguins:read' })), 'fragment', 'invalid_scope'],
    [await page(server, jar, url({ response_type: 'code', scope: 'orders:write', prompt: 'none' })), 'query', 'consent_required'],
    [await page(server, new CookieJar(), url({ response_type: 'token', scope: 'zoos:read', prompt: 'none' })), 'fragment', 'login_required'],
    [await page(server, jar, url({ response_type: 'nonsense' })), 'query', 'unsupported_response_type'],
  ] as const;
  for (const [answer, where, error] of errors) {
    assert.equal(answer.status, 302, answer.html);
    const p = redirectParams(answer.location!, where);
    assert.equal(p.get('error'), error);
    assert.equal(p.get('iss'), issuer, `${error} in the ${where}`);
    assert.equal(p.get('state'), 'st');
  }
});
