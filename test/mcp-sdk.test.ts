// The official MCP SDK client against a spawned gatehouse (docs/mcp.md), over HTTPS with its
// self-signed certificate: the first connect is 401 → discovery (RFC 9728 for {publicUrl}/mcp, then
// RFC 8414) → dynamic client registration → the authorization URL with PKCE and `resource`, whose
// login and consent pages the test walks (choosing the scope and the validity) → finishAuth → the
// tools of the scopes chosen → create, list with filters, get, update, delete; the same records,
// owner and events through /v1 with a /v1 token of the same user.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { fetch as undiciFetch } from 'undici';
import { startServer, type TestServer } from './helpers/server.js';
import { CookieJar, addClient, addUser, basic, decide, post, redirectParams, signIn, type RegisteredClient } from './helpers/oauth.js';

let server: TestServer;
let apiClient: RegisteredClient;
const CALLBACK = 'http://127.0.0.1:33418/callback';

before(async () => {
  server = await startServer({ config: { auth: { registration: 'open' } } });
  addUser(server, 'alice', 'alice-password-1');
  apiClient = addClient(server, 'api-client', ['--grant', 'password']);
});
after(async () => {
  await server?.cleanup();
});

/** The SDK's fetch, trusting the test server's certificate (a desktop client would set NODE_EXTRA_CA_CERTS). */
const trustingFetch = ((url: string | URL, init?: RequestInit) => undiciFetch(url, { ...(init as object), dispatcher: server.agent }) as unknown as Promise<Response>) as typeof fetch;

/** An OAuthClientProvider kept in memory, as an MCP host keeps one per server. */
class MemoryProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  authorizationUrl?: URL;
  get redirectUrl() {
    return CALLBACK;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'MCP test host', redirect_uris: [CALLBACK], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** Connects as the SDK does: 401, discovery, registration, then the user's login and consent (scope and validity chosen), then the code. */
async function connectAs(user: string, scope: string[], ttl?: string, provider = new MemoryProvider()) {
  const registered = provider.client !== undefined;
  const url = new URL(`${server.url}/mcp`);
  const first = new StreamableHTTPClientTransport(url, { authProvider: provider, fetch: trustingFetch });
  await assert.rejects(new Client({ name: 'test-host', version: '1' }).connect(first), UnauthorizedError);
  assert.ok(provider.client?.client_id, registered ? 'pre-registered' : 'registered dynamically');
  const authorize = provider.authorizationUrl!;
  assert.equal(authorize.searchParams.get('resource'), `${server.url}/mcp`);
  assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
  const jar = new CookieJar();
  const consent = await signIn(server, jar, authorize.href, user, `${user}-password-1`);
  const offered = [...consent.html.matchAll(/name="ttl" value="(\d+)"/g)].map((m) => m[1]);
  const chosenTtl = ttl ?? offered[0];
  assert.ok(offered.includes(chosenTtl), `validity ${chosenTtl} offered among ${offered}`);
  const done = await decide(server, jar, consent, { scope, ttl: chosenTtl });
  assert.equal(done.status, 302, done.html);
  const code = redirectParams(done.location!).get('code')!;
  await first.finishAuth(code);
  assert.deepEqual(provider.saved!.scope!.split(' ').sort(), [...scope].sort());
  const client = new Client({ name: 'test-host', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider, fetch: trustingFetch }));
  return { client, provider };
}

type Json = any;
const result = (r: Json) => JSON.parse(r.content[0].text);

test('read-only consent: the SDK client sees list_zoos and get_zoos only; create_zoos is a tool error naming zoos:write', async () => {
  const { client } = await connectAs('alice', ['zoos:read']);
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name), ['list_zoos', 'get_zoos']);
  const refused = (await client.callTool({ name: 'create_zoos', arguments: { name: 'Nope' } })) as Json;
  assert.equal(refused.isError, true);
  assert.match(refused.content[0].text, /zoos:write/);
  await client.close();
});

test('read and write: create, list with filters, get, update, delete through the SDK; the same records, owner and events through /v1', async () => {
  const { client } = await connectAs('alice', ['zoos:read', 'zoos:write']);
  assert.deepEqual((await client.listTools()).tools.map((t) => t.name), ['list_zoos', 'get_zoos', 'create_zoos', 'update_zoos', 'delete_zoos']);
  const created = (await client.callTool({ name: 'create_zoos', arguments: { name: 'Vincennes', city: 'Paris', founded: 1934 } })) as Json;
  assert.equal(created.isError, undefined, JSON.stringify(created));
  const zoo = created.structuredContent;
  assert.equal(zoo.name, 'Vincennes');
  await client.callTool({ name: 'create_zoos', arguments: { name: 'Berlin', founded: 1844 } });

  const listed = result(await client.callTool({ name: 'list_zoos', arguments: { founded: { gte: 1900 }, city: 'Paris' } }));
  assert.deepEqual(listed.records.map((z: Json) => z.id), [zoo.id]);
  assert.equal(result(await client.callTool({ name: 'get_zoos', arguments: { id: zoo.id } })).city, 'Paris');
  const updated = result(await client.callTool({ name: 'update_zoos', arguments: { id: zoo.id, city: 'Paris 12e' } }));
  assert.equal(updated.city, 'Paris 12e');
  assert.equal(updated.founded, 1934);

  // The same user's /v1 token sees the same record, owned by the user, and its events by the user.
  const v1 = await post(server, 'token', { grant_type: 'password', username: 'alice', password: 'alice-password-1', scope: 'zoos:read' }, { auth: basic('api-client', apiClient.client_secret!) });
  assert.equal(v1.status, 200, JSON.stringify(v1.body));
  const auth = { authorization: `Bearer ${v1.body.access_token}` };
  const seen = await server.json('GET', `/v1/zoos/${zoo.id}`, undefined, auth);
  assert.equal(seen.status, 200);
  assert.equal(seen.body.city, 'Paris 12e');
  assert.equal(seen.body.owner, zoo.owner);
  const me = await server.json('GET', '/oauth/userinfo', undefined, auth);
  if (me.status === 200) assert.equal(zoo.owner, `user:${me.body.sub}`);
  const events = await server.json('GET', '/v1/events?collections=zoos', undefined, auth);
  const mine = events.body.filter((e: Json) => e.record_id === zoo.id);
  assert.deepEqual(mine.map((e: Json) => [e.type, e.actor]), [['record.created', zoo.owner], ['record.updated', zoo.owner]]);

  const deleted = result(await client.callTool({ name: 'delete_zoos', arguments: { id: zoo.id } }));
  assert.equal(deleted.deleted, true);
  assert.equal((await server.json('GET', `/v1/zoos/${zoo.id}`, undefined, auth)).status, 410);

  const resource = await client.readResource({ uri: `gatehouse://zoos/${listed.records[0].id}` }).catch((e: Error) => e);
  assert.ok(resource instanceof Error, 'a deleted record is not a resource');
  await client.close();
});

test('a token from the SDK flow is for /mcp only: 401 at /v1', async () => {
  const { client, provider } = await connectAs('alice', ['zoos:read']);
  const r = await server.json('GET', '/v1/zoos', undefined, { authorization: `Bearer ${provider.saved!.access_token}` });
  assert.equal(r.status, 401);
  await client.close(); // its session's GET stream would hold the test server's connections open
});

test('docs/mcp.md: a public client registered with the CLI, returned by clientInformation(), no registration; a longer validity chosen', async () => {
  const r = server.cli(['client', 'add', 'mcp-host', '--public', '--name', 'My MCP host', '--redirect-uri', CALLBACK, '--grant', 'authorization_code', '--grant', 'refresh_token']);
  assert.equal(r.status, 0, r.stderr);
  const provider = new MemoryProvider();
  provider.client = { client_id: 'mcp-host' };
  const { client } = await connectAs('alice', ['zoos:read', 'orders:read'], '86400', provider);
  assert.equal(provider.client.client_id, 'mcp-host');
  assert.deepEqual((await client.listTools()).tools.map((t) => t.name), ['list_zoos', 'get_zoos', 'list_orders', 'get_orders']);
  const page = result(await client.callTool({ name: 'list_zoos', arguments: { founded: { gte: 1900 }, limit: 5 } }));
  assert.ok(Array.isArray(page.records));
  await client.close();
});
