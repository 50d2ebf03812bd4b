// JWT access tokens (RFC 9068, auth.accessTokenFormat: jwt; docs/oauth.md#jwt-access-tokens):
// signed with the deployment's ID token keys (the JWKS at jwks_uri), `typ: at+jwt`; gatehouse
// still checks the stored row (found by `jti`) for revocation, the grant and the audience. Only
// the token's hash is stored. Run on SQLite, and on PostgreSQL with GATEHOUSE_TEST_PG=1.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { SignJWT, decodeJwt, decodeProtectedHeader, generateKeyPair } from 'jose';
import { sqlOf } from '../src/platform/store/sql.js';
import { sha256 } from '../src/platform/crypto/secrets.js';
import { idTokenKeys } from '../src/authserver/oidc/keys.js';
import { createPgDatabase, pgAvailable } from './helpers/server.js';
import { startApp, type InProcessApp } from './helpers/app.js';
import { CookieJar, addClient, addUser, basic, decide, introspect, post, signIn, sleep, type RegisteredClient } from './helpers/oauth.js';

const CB = 'https://rp.example/callback';

for (const engine of ['SQLite', 'PostgreSQL'] as const) {
  const skip = engine === 'PostgreSQL' && !pgAvailable && 'needs PostgreSQL (GATEHOUSE_TEST_PG=1)';
  describe(`JWT access tokens (${engine})`, { skip }, () => {
    let server: InProcessApp;
    let database: { url: string; drop(): Promise<void> } | undefined;
    let rp: RegisteredClient;
    let as: oauth.AuthorizationServer;
    const opts = () => ({ [oauth.customFetch]: (url: string, init: RequestInit) => server.fetch(url, init as object) as unknown as Promise<Response> }) as const;
    const rpAuth = () => basic('rp', rp.client_secret!);
    const api = (token: string) => server.fetch('/v1/zoos', { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });

    before(async () => {
      if (engine === 'PostgreSQL') database = await createPgDatabase();
      server = await startApp({ ...(database ? { database: database.url } : {}), config: { auth: { accessTokenFormat: 'jwt' } } });
      await addUser(server, 'erin', 'erin-password-1');
      rp = await addClient(server, 'rp', ['--grant', 'authorization_code', '--grant', 'refresh_token', '--grant', 'client_credentials', '--redirect-uri', CB]);
      const issuer = new URL(server.url);
      as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...opts() }));
    });
    after(async () => {
      await server?.cleanup();
      await database?.drop();
    });

    async function codeFlowTokens(resource?: string) {
      const verifier = oauth.generateRandomCodeVerifier();
      const url = new URL(as.authorization_endpoint!);
      for (const [k, v] of Object.entries({ client_id: 'rp', redirect_uri: CB, response_type: 'code', scope: 'zoos:read', state: 'st', code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' }))
        url.searchParams.set(k, v);
      if (resource) url.searchParams.set('resource', resource);
      const jar = new CookieJar();
      const done = await decide(server, jar, await signIn(server, jar, url.href, 'erin', 'erin-password-1'));
      const params = oauth.validateAuthResponse(as, { client_id: 'rp' }, new URL(done.location!), 'st');
      const res = await oauth.authorizationCodeGrantRequest(as, { client_id: 'rp' }, oauth.ClientSecretBasic(rp.client_secret!), params, CB, verifier, {
        ...opts(),
        ...(resource ? { additionalParameters: { resource } } : {}),
      });
      return oauth.processAuthorizationCodeResponse(as, { client_id: 'rp' }, res);
    }

    test('oauth4webapi validateJwtAccessToken accepts the token against the JWKS; its claims are RFC 9068', async () => {
      const tokens = await codeFlowTokens(`${server.url}/v1`);
      const header = decodeProtectedHeader(tokens.access_token);
      assert.equal(header.typ, 'at+jwt');
      assert.equal(header.alg, 'RS256');
      const request = new Request(`${server.url}/v1/zoos`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      const claims = await oauth.validateJwtAccessToken(as, request, `${server.url}/v1`, opts());
      assert.equal(claims.iss, server.url);
      assert.equal(claims.aud, `${server.url}/v1`);
      assert.equal(claims.client_id, 'rp');
      assert.equal(claims.scope, 'zoos:read');
      assert.match(claims.sub, /^user:/);
      assert.equal(typeof claims.auth_time, 'number');
      // The row is found by the jti, and holds the token's hash, never the token.
      const row = await sqlOf(server.ctx.store).selectFrom('access_tokens').selectAll().where('id', '=', claims.jti).executeTakeFirstOrThrow();
      assert.equal(row.hash, sha256(tokens.access_token));
      assert.ok(!JSON.stringify(row).includes(tokens.access_token.split('.')[2]));
      assert.equal((await api(tokens.access_token)).status, 200);
      // Introspection accepts it and says the same.
      const info = await introspect(server, tokens.access_token, rp);
      assert.equal(info.active, true);
      assert.equal(info.aud, `${server.url}/v1`);
      assert.equal(info.sub, claims.sub);
      // Refresh: another JWT.
      const refreshed = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! }, { auth: rpAuth() });
      assert.equal(decodeProtectedHeader(refreshed.body.access_token).typ, 'at+jwt');
      assert.equal((await api(refreshed.body.access_token)).status, 200);
    });

    test('openid-client: client credentials gives a JWT whose sub is the client', async () => {
      const config = await client.discovery(new URL(server.url), 'rp', rp.client_secret!, undefined, {
        algorithm: 'oauth2',
        [client.customFetch]: (url: string, init: RequestInit) => server.fetch(url, init as object) as unknown as Promise<Response>,
      });
      const tokens = await client.clientCredentialsGrant(config, { scope: 'zoos:read', resource: `${server.url}/mcp` });
      const claims = decodeJwt(tokens.access_token);
      assert.equal(claims.sub, 'client:rp');
      assert.equal(claims.aud, `${server.url}/mcp`);
      // For /mcp: refused at /v1, its signature notwithstanding.
      assert.equal((await api(tokens.access_token)).status, 401);
    });

    test('a JWT revoked at the revocation endpoint is 401 at /v1 within a second', async () => {
      const r = await post(server, 'token', { grant_type: 'client_credentials', scope: 'zoos:read' }, { auth: rpAuth() });
      assert.equal((await api(r.body.access_token)).status, 200);
      const revoked = await post(server, 'revocation', { token: r.body.access_token }, { auth: rpAuth() });
      assert.equal(revoked.status, 200);
      const deadline = Date.now() + 1000;
      let status = 200;
      while (Date.now() < deadline && (status = (await api(r.body.access_token)).status) === 200) await sleep(50);
      assert.equal(status, 401);
      assert.equal((await introspect(server, r.body.access_token, rp)).active, false);
    });

    test('tampered payload, wrong typ, wrong aud, expired, foreign key, none: 401 invalid_token', async () => {
      const r = await post(server, 'token', { grant_type: 'client_credentials', scope: 'zoos:read' }, { auth: rpAuth() });
      const token: string = r.body.access_token;
      const claims = decodeJwt(token);
      const [h, , s] = token.split('.');
      const tamperedClaims = { ...claims, scope: 'zoos:read zoos:write' };
      const tampered = `${h}.${Buffer.from(JSON.stringify(tamperedClaims)).toString('base64url')}.${s}`;
      const { kid, key } = await idTokenKeys(server.ctx).signingKey('RS256');
      const sign = (payload: Record<string, unknown>, header: Record<string, unknown>, k: Parameters<SignJWT['sign']>[0] = key) =>
        new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt', ...header }).sign(k);
      const now = Math.floor(Date.now() / 1000);
      const foreign = (await generateKeyPair('RS256')).privateKey;
      const cases: Record<string, string> = {
        tampered,
        'typ JWT': await sign(claims, { typ: 'JWT' }),
        'aud /mcp': await sign({ ...claims, aud: `${server.url}/mcp` }, {}),
        'aud elsewhere': await sign({ ...claims, aud: 'https://evil.example/' }, {}),
        expired: await sign({ ...claims, iat: now - 7200, exp: now - 3600 }, {}),
        'iss elsewhere': await sign({ ...claims, iss: 'https://evil.example' }, {}),
        'foreign key': await sign(claims, {}, foreign),
        'unsigned (none)': `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')}.${token.split('.')[1]}.`,
      };
      for (const [name, bad] of Object.entries(cases)) {
        const res = await api(bad);
        assert.equal(res.status, 401, name);
        assert.match(res.headers.get('www-authenticate') ?? '', /invalid_token/, name);
        assert.equal((await introspect(server, bad, rp)).active, false, name);
      }
      // The genuine one still works.
      assert.equal((await api(token)).status, 200);
    });

    test('the row decides as for an opaque token: a JWT whose row has ended is 401 once the check is read again', async () => {
      const r = await post(server, 'token', { grant_type: 'client_credentials', scope: 'zoos:read' }, { auth: rpAuth() });
      assert.equal((await api(r.body.access_token)).status, 200);
      const id = decodeJwt(r.body.access_token).jti!;
      await sqlOf(server.ctx.store).updateTable('access_tokens').set({ expires_at: Date.now() - 1 }).where('id', '=', id).execute();
      await sleep(600);
      assert.equal((await api(r.body.access_token)).status, 401);
    });
  });
}
