// A NUL character (U+0000) where the request puts text into the database: PostgreSQL cannot store
// it in text or jsonb and refuses the statement, which was a 500 (and an MCP "Internal error").
// It is bad input: 400 naming the character on PostgreSQL, nothing changed; SQLite stores or finds
// nothing as before. Never a 5xx on either engine.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type InProcessApp } from './helpers/app.js';
import { addClient, addUser, basic, post } from './helpers/oauth.js';
import { createPgDatabase, pgAvailable } from './helpers/server.js';

async function tokenFor(app: InProcessApp, resource: 'v1' | 'mcp'): Promise<string> {
  const client = await addClient(app, `c-${resource}`, ['--grant', 'password']);
  const r = await post(app, 'token', { grant_type: 'password', username: 'alice', password: 'alice-password-1', scope: 'zoos:read zoos:write', resource: `${app.url}/${resource}` }, { auth: basic(client.client_id, client.client_secret!) });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.access_token;
}

async function check(app: InProcessApp, engine: string) {
  await addUser(app, 'alice', 'alice-password-1');
  const v1 = await tokenFor(app, 'v1');
  const mcp = await tokenFor(app, 'mcp');
  const auth = { authorization: `Bearer ${v1}` };
  const answers = [
    await app.json('GET', '/v1/zoos/a%00b', undefined, auth),
    await app.json('GET', '/v1/zoos?name=a%00b', undefined, auth),
    await app.json('GET', '/v1/zoos?q=a%00b', undefined, auth),
    await app.json('POST', '/v1/zoos', { name: 'a\u0000b', city: 'Paris' }, auth),
  ];
  for (const r of answers) {
    assert.ok(r.status < 500, `${engine}: ${r.status} ${JSON.stringify(r.body)}`);
    if (engine === 'PostgreSQL' && r.status === 400) assert.match(JSON.stringify(r.body), /NUL/);
  }
  const called = await app.fetch('/mcp', {
    method: 'POST',
    headers: { authorization: `Bearer ${mcp}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_zoos', arguments: { id: 'a\u0000b' } } }),
  });
  const body = await called.json();
  assert.equal(body.result?.isError, true, `${engine}: a tool error, not ${JSON.stringify(body)}`);
  assert.ok(JSON.parse(body.result.content[0].text).status < 500, JSON.stringify(body));
  // The authorization server: a user name, a client id.
  const client = await addClient(app, 'c-nul', ['--grant', 'password']);
  const signIn = await post(app, 'token', { grant_type: 'password', username: 'a\u0000b', password: 'x' }, { auth: basic(client.client_id, client.client_secret!) });
  assert.ok(signIn.status < 500, `${engine}: token ${signIn.status} ${JSON.stringify(signIn.body)}`);
  const stranger = await post(app, 'token', { grant_type: 'client_credentials' }, { auth: basic('a\u0000b', 'secret') });
  assert.ok(stranger.status < 500, `${engine}: token ${stranger.status} ${JSON.stringify(stranger.body)}`);
  const page = await app.fetch('/oauth/authorize?response_type=code&client_id=a%00b&redirect_uri=https%3A%2F%2Fx.example%2Fcb');
  assert.ok(page.status < 500, `${engine}: authorize ${page.status}`);
  const listed = await app.json('GET', '/v1/zoos', undefined, auth);
  assert.equal(listed.body.filter((z: { name: string }) => z.name.includes('\u0000')).length, engine === 'SQLite' ? listed.body.filter((z: { name: string }) => z.name === 'a\u0000b').length : 0, 'nothing stored on PostgreSQL');
}

test('a NUL in a path id, a filter, a search, a record field, a user name or a client id: never a 5xx (SQLite)', async () => {
  const app = await startApp();
  try {
    await check(app, 'SQLite');
  } finally {
    await app.cleanup();
  }
});

test('a NUL in a path id, a filter, a search, a record field, a user name or a client id: 400 on PostgreSQL, nothing stored', { skip: !pgAvailable && 'PostgreSQL not available' }, async () => {
  const database = await createPgDatabase();
  const app = await startApp({ database: database.url });
  try {
    await check(app, 'PostgreSQL');
  } finally {
    await app.cleanup();
    await database.drop();
  }
});
