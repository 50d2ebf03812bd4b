// `gatehouse serve --role auth` and `--role resource`: the two servers (docs/deployment.md#splitting-the-two-servers) as two processes on one
// database. The resource process verifies tokens without the auth process's help.
// Spawned server (test/helpers/server.ts), not in process: --role auth and --role resource as two processes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { startServer, tempDir, testConfig, writeConfig, type TestServer } from './helpers/server.js';
import { registerClient, requestToken, secretOf } from './helpers/tokens.js';

let dir: string;
let auth: TestServer;
let resource: TestServer;

before(async () => {
  dir = tempDir();
  auth = await startServer({ dataDir: dir, args: ['--role', 'auth'] });
  const resourceConfig = writeConfig(tempDir(), testConfig({ auth: { url: `${auth.url}/oauth` } }));
  resource = await startServer({ dataDir: dir, configFile: resourceConfig, args: ['--role', 'resource'] });
});

after(async () => {
  await Promise.all([auth?.stop(), resource?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

test('each process serves only its half', async () => {
  assert.match(resource.output(), /role\s+resource/);
  assert.match(auth.output(), /role\s+auth/);
  assert.equal((await auth.json('GET', '/v1/zoos')).status, 404);
  assert.equal((await resource.json('POST', '/oauth/token', { grant_type: 'client_credentials' })).status, 404);
  assert.equal((await resource.json('GET', '/health')).body.role, 'resource');
  const metadata = await resource.json('GET', '/.well-known/oauth-protected-resource');
  assert.equal(metadata.status, 200);
  assert.deepEqual(metadata.body.authorization_servers, [auth.url]);
  const as = await auth.json('GET', '/.well-known/oauth-authorization-server');
  assert.equal(as.body.issuer, auth.url);
  // The MCP server is a face of the resource role (docs/mcp.md): its 401 and metadata there, nothing on the auth role.
  const mcp = await resource.json('POST', '/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' });
  assert.equal(mcp.status, 401);
  assert.match(mcp.headers.get('www-authenticate')!, new RegExp(`resource_metadata="${resource.url}/\\.well-known/oauth-protected-resource/mcp"`));
  const mcpMetadata = await resource.json('GET', '/.well-known/oauth-protected-resource/mcp');
  assert.deepEqual([mcpMetadata.body.resource, mcpMetadata.body.authorization_servers], [`${resource.url}/mcp`, [auth.url]]);
  assert.equal((await auth.json('POST', '/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status, 404);
});

test('a token issued by the auth process works on the resource process, and its revocation is honoured within a second', async () => {
  registerClient(auth, 'split-app');
  const issued = await requestToken(auth, 'split-app', 'zoos:read zoos:write');
  assert.equal(issued.status, 200, JSON.stringify(issued.body));
  const token = issued.body.access_token;
  const created = await resource.json('POST', '/v1/zoos', { name: 'Split' }, { authorization: `Bearer ${token}` });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.body.owner, 'client:split-app');
  assert.equal((await resource.json('GET', `/v1/zoos/${created.body.id}`, undefined, { authorization: `Bearer ${token}` })).status, 200);

  const revoked = await auth.fetch('/oauth/revocation', {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: 'Basic ' + Buffer.from(`split-app:${secretOf('split-app')}`).toString('base64'),
    },
    body: `token=${encodeURIComponent(token)}`,
  });
  assert.equal(revoked.status, 200);
  await new Promise((r) => setTimeout(r, 1000));
  const after = await resource.json('GET', `/v1/zoos/${created.body.id}`, undefined, { authorization: `Bearer ${token}` });
  assert.equal(after.status, 401);
});
