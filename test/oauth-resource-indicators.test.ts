// Resource indicators (RFC 8707, docs/oauth.md#resource-indicators): the deployment's resources
// are {publicUrl}/v1 and {publicUrl}/mcp; an access token is for one of them (its audience, in
// introspection's `aud`); a token for one is 401 at the other; an unknown resource is
// invalid_target, at /authorize as an error redirect once the redirect URI is verified. Tokens
// stored before audiences (none) count as the API's. On SQLite, and on PostgreSQL with GATEHOUSE_TEST_PG=1.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as oauth from 'oauth4webapi';
import { sqlOf } from '../src/platform/store/sql.js';
import { createPgDatabase, pgAvailable } from './helpers/server.js';
import { startApp, type InProcessApp } from './helpers/app.js';
import { CookieJar, addClient, addUser, authorizeUrl, basic, decide, introspect, page, post, redirectParams, signIn, type RegisteredClient } from './helpers/oauth.js';

for (const engine of ['SQLite', 'PostgreSQL'] as const) {
  const skip = engine === 'PostgreSQL' && !pgAvailable && 'needs PostgreSQL (GATEHOUSE_TEST_PG=1)';
  describe(`resource indicators (${engine})`, { skip }, () => {
    let server: InProcessApp;
    let rp: RegisteredClient;
    let as: oauth.AuthorizationServer;
    const CB = 'https://rp.example/callback';
    const fetchOf = () => (url: string, init: RequestInit) => server.fetch(url, init as object) as unknown as Promise<Response>;
    const opts = () => ({ [oauth.customFetch]: fetchOf() }) as const;
    const V1 = () => `${server.url}/v1`;
    const MCP = () => `${server.url}/mcp`;

    let database: { url: string; drop(): Promise<void> } | undefined;

    before(async () => {
      if (engine === 'PostgreSQL') database = await createPgDatabase();
      server = await startApp(database ? { database: database.url } : {});
      await addUser(server, 'erin', 'erin-password-1');
      rp = await addClient(server, 'rp', ['--grant', 'authorization_code', '--grant', 'refresh_token', '--grant', 'client_credentials', '--grant', 'password', '--grant', 'implicit', '--redirect-uri', CB]);
      const issuer = new URL(server.url);
      as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...opts() }));
    });
    after(async () => {
      await server?.cleanup();
      await database?.drop();
    });

    const client = (): oauth.Client => ({ client_id: 'rp' });
    const auth = () => oauth.ClientSecretBasic(rp.client_secret!);
    const basicAuth = () => basic('rp', rp.client_secret!);

    /** Signs in, consents and returns the redirect's parameters (code flow), with `resource` repeated as given. */
    async function authorize(resources: string[], extra: Record<string, string> = {}) {
      const verifier = oauth.generateRandomCodeVerifier();
      const url = new URL(as.authorization_endpoint!);
      url.searchParams.set('client_id', 'rp');
      url.searchParams.set('redirect_uri', CB);
      url.searchParams.set('response_type', extra.response_type ?? 'code');
      url.searchParams.set('scope', 'zoos:read');
      url.searchParams.set('state', 'st');
      if ((extra.response_type ?? 'code') === 'code') {
        url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
        url.searchParams.set('code_challenge_method', 'S256');
      }
      for (const r of resources) url.searchParams.append('resource', r);
      const jar = new CookieJar();
      const consent = await signIn(server, jar, url.href, 'erin', 'erin-password-1');
      const done = await decide(server, jar, consent);
      assert.equal(done.status, 302, done.html);
      return { location: new URL(done.location!), verifier };
    }

    async function codeTokens(resources: string[], tokenResource?: string) {
      const { location, verifier } = await authorize(resources);
      const params = oauth.validateAuthResponse(as, client(), location, 'st');
      const res = await oauth.authorizationCodeGrantRequest(as, client(), auth(), params, CB, verifier, {
        ...opts(),
        ...(tokenResource ? { additionalParameters: { resource: tokenResource } } : {}),
      });
      return res;
    }

    const api = (token: string, path = '/v1/zoos') => server.fetch(path, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });

    test('oauth4webapi: a code for {publicUrl}/mcp gives a token whose aud is /mcp; it is 401 at /v1 naming the /v1 metadata', async () => {
      const tokens = await oauth.processAuthorizationCodeResponse(as, client(), await codeTokens([MCP()], MCP()));
      const info = await oauth.processIntrospectionResponse(as, client(), await oauth.introspectionRequest(as, client(), auth(), tokens.access_token, opts()));
      assert.equal(info.active, true);
      assert.equal(info.aud, MCP());
      const res = await api(tokens.access_token);
      assert.equal(res.status, 401);
      const challenge = res.headers.get('www-authenticate')!;
      assert.match(challenge, /error="invalid_token"/);
      assert.match(challenge, /another resource/);
      assert.ok(challenge.includes(`resource_metadata="${server.url}/.well-known/oauth-protected-resource/v1"`), challenge);
    });

    test('without resource: the audience is {publicUrl}/v1 and the token works at /v1; so with resource=/v1', async () => {
      for (const [resources, tokenResource] of [[[], undefined], [[V1()], V1()], [[V1()], undefined]] as const) {
        const tokens = await oauth.processAuthorizationCodeResponse(as, client(), await codeTokens([...resources], tokenResource));
        assert.equal((await introspect(server, tokens.access_token, rp)).aud, V1());
        assert.equal((await api(tokens.access_token)).status, 200);
      }
    });

    test('/authorize: an unknown resource, a relative one or one with a fragment is an invalid_target redirect with state', async () => {
      for (const resource of ['https://evil.example/', '/v1', `${server.url}/v1#x`, `${server.url}/v2`]) {
        const url = authorizeUrl({ response_type: 'code', client_id: 'rp', redirect_uri: CB, scope: 'zoos:read', state: 'st', resource });
        const p = await page(server, new CookieJar(), url);
        assert.equal(p.status, 302, `${resource}: ${p.html}`);
        const params = redirectParams(p.location!);
        assert.equal(params.get('error'), 'invalid_target', resource);
        assert.equal(params.get('state'), 'st');
        assert.equal(params.get('iss'), server.url);
      }
      // Before the redirect URI is verified: an error page, never a redirect.
      const p = await page(server, new CookieJar(), authorizeUrl({ response_type: 'code', client_id: 'rp', redirect_uri: 'https://evil.example/cb', resource: 'https://evil.example/' }));
      assert.equal(p.status, 400);
      assert.equal(p.location, null);
    });

    test('/authorize: several resources are allowed; the implicit grant (a token at once) takes one', async () => {
      const url = authorizeUrl({ response_type: 'token', client_id: 'rp', redirect_uri: CB, scope: 'zoos:read', state: 'st' }) + `&resource=${encodeURIComponent(V1())}&resource=${encodeURIComponent(MCP())}`;
      const p = await page(server, new CookieJar(), url);
      assert.equal(p.status, 302);
      assert.equal(redirectParams(p.location!, 'fragment').get('error'), 'invalid_target');
      // One: the token in the fragment is for it.
      const { location } = await authorize([MCP()], { response_type: 'token' });
      const token = new URLSearchParams(location.hash.slice(1)).get('access_token')!;
      assert.equal((await introspect(server, token, rp)).aud, MCP());
    });

    test('/token: an unknown resource, one with a fragment, and two resources are invalid_target', async () => {
      const cc = (resource: string | string[]) => {
        const body = new URLSearchParams({ grant_type: 'client_credentials', scope: 'zoos:read' });
        for (const r of [resource].flat()) body.append('resource', r);
        return post(server, 'token', {}, { auth: basicAuth(), raw: body.toString() });
      };
      for (const resource of ['https://evil.example/', `${server.url}/v1#frag`, 'not a uri', [V1(), MCP()]]) {
        const r = await cc(resource);
        assert.equal(r.status, 400, JSON.stringify(resource));
        assert.equal(r.body.error, 'invalid_target', JSON.stringify(r.body));
      }
      assert.match((await cc([V1(), MCP()])).body.error_description, /One resource per token/);
      // The same one twice is one resource; the host's case and the default port are normalized.
      const same = await cc([V1(), V1()]);
      assert.equal(same.status, 200, JSON.stringify(same.body));
      const ok = await cc(MCP());
      assert.equal(ok.status, 200);
      assert.equal((await introspect(server, ok.body.access_token, rp)).aud, MCP());
      // In a JSON body resource is a string like every parameter: an array is invalid_request, not ignored.
      const array = await post(server, 'token', {}, { auth: basicAuth(), json: true, raw: JSON.stringify({ grant_type: 'client_credentials', resource: [V1(), MCP()] }) });
      assert.equal(array.body.error, 'invalid_request');
      // The admin API is the API's too: a token for /mcp is 401 there.
      const admin = await server.fetch('/admin/v1/users', { headers: { authorization: `Bearer ${ok.body.access_token}`, accept: 'application/json' } });
      assert.equal(admin.status, 401);
      // A parameter other than resource is still refused when repeated.
      const repeated = await post(server, 'token', {}, { auth: basicAuth(), raw: 'grant_type=client_credentials&scope=zoos:read&scope=zoos:read' });
      assert.equal(repeated.body.error, 'invalid_request');
    });

    test('a code is redeemed only for a resource of its authorization request; several need one named', async () => {
      // No resource at /authorize: the API alone.
      const narrowed = await codeTokens([], MCP());
      assert.equal(narrowed.status, 400);
      assert.equal(((await narrowed.json()) as { error: string }).error, 'invalid_target');
      // Two at /authorize, none at /token: which one is the token for?
      const unnamed = await codeTokens([V1(), MCP()]);
      assert.equal(((await unnamed.json()) as { error: string }).error, 'invalid_target');
    });

    test('refresh narrows to one of the resources of the authorization request; another is invalid_target', async () => {
      const tokens = await oauth.processAuthorizationCodeResponse(as, client(), await codeTokens([V1(), MCP()], V1()));
      assert.equal((await introspect(server, tokens.access_token, rp)).aud, V1());
      const toMcp = await oauth.processRefreshTokenResponse(
        as,
        client(),
        await oauth.refreshTokenGrantRequest(as, client(), auth(), tokens.refresh_token!, { ...opts(), additionalParameters: { resource: MCP() } }),
      );
      assert.equal((await introspect(server, toMcp.access_token, rp)).aud, MCP());
      // The new refresh token keeps both.
      const back = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: toMcp.refresh_token!, resource: V1() }, { auth: basicAuth() });
      assert.equal(back.status, 200, JSON.stringify(back.body));
      assert.equal((await api(back.body.access_token)).status, 200);

      // Granted only /v1: a refresh for /mcp is refused, and the refresh token is not spent.
      const only = await oauth.processAuthorizationCodeResponse(as, client(), await codeTokens([V1()], V1()));
      const refused = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: only.refresh_token!, resource: MCP() }, { auth: basicAuth() });
      assert.equal(refused.status, 400);
      assert.equal(refused.body.error, 'invalid_target');
      const still = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: only.refresh_token! }, { auth: basicAuth() });
      assert.equal(still.status, 200, JSON.stringify(still.body));
    });

    test('password grant: the resource is the audience, and its refresh token stays bound to it', async () => {
      const r = await post(server, 'token', { grant_type: 'password', username: 'erin', password: 'erin-password-1', scope: 'zoos:read', resource: MCP() }, { auth: basicAuth() });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal((await api(r.body.access_token)).status, 401);
      const refreshed = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: r.body.refresh_token, resource: V1() }, { auth: basicAuth() });
      assert.equal(refreshed.body.error, 'invalid_target');
      const bad = await post(server, 'token', { grant_type: 'password', username: 'erin', password: 'erin-password-1', resource: 'https://evil.example/' }, { auth: basicAuth() });
      assert.equal(bad.body.error, 'invalid_target');
    });

    test('a token stored before resource indicators (no audience) still works at /v1', async () => {
      const r = await post(server, 'token', { grant_type: 'client_credentials', scope: 'zoos:read' }, { auth: basicAuth() });
      await sqlOf(server.ctx.store).updateTable('access_tokens').set({ audience: null }).where('client_id', '=', 'rp').execute();
      assert.equal((await api(r.body.access_token)).status, 200);
      assert.equal((await introspect(server, r.body.access_token, rp)).aud, V1());
    });

    test('RFC 9728: /.well-known/oauth-protected-resource/v1 describes {publicUrl}/v1; the old document stays', async () => {
      const v1 = await server.fetch('/.well-known/oauth-protected-resource/v1', { headers: { accept: 'application/json' } });
      assert.equal(v1.status, 200);
      const doc = (await v1.json()) as Record<string, unknown>;
      assert.equal(doc.resource, V1());
      assert.deepEqual(doc.authorization_servers, [server.url]);
      assert.ok(Array.isArray(doc.scopes_supported));
      const old = (await (await server.fetch('/.well-known/oauth-protected-resource', { headers: { accept: 'application/json' } })).json()) as Record<string, unknown>;
      assert.equal(old.resource, server.url);
      // oauth4webapi's RFC 9728 client accepts the per-resource document.
      const meta = await oauth.processResourceDiscoveryResponse(new URL(V1()), await oauth.resourceDiscoveryRequest(new URL(V1()), opts()));
      assert.equal(meta.resource, V1());
      // The MCP server publishes its own (test/mcp-access.test.ts), which oauth4webapi accepts too.
      const mcp = await oauth.processResourceDiscoveryResponse(new URL(MCP()), await oauth.resourceDiscoveryRequest(new URL(MCP()), opts()));
      assert.equal(mcp.resource, MCP());
    });
  });
}
