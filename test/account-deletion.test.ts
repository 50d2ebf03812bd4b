// Deleting an account on the account page of a real deployment: two server processes on one data
// directory, the user deleting on instance A while their token is cached on both; the token must
// be refused by both within a second, their records answer 410 on B, another user's stay, and the
// events are on B's admin feed. (The export, the deletion's rules and its resumption after a
// crash are test/account-data.test.ts, in process.)
// Spawned servers (test/helpers/server.ts), not in process: the point is two processes over HTTPS.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/server.js';
import { CookieJar, addClient, addUser, basic, hiddenField, page, post, type RegisteredClient } from './helpers/oauth.js';

const SCOPE = 'zoos:read zoos:write animals:read animals:write';
let a: TestServer;
let b: TestServer;
let app: RegisteredClient;
let adminToken: string;

before(async () => {
  a = await startServer();
  b = await startServer({ dataDir: a.dataDir, configFile: a.configFile });
  addUser(a, 'hanna', 'hanna-password-1');
  addUser(a, 'ivan', 'ivan-password-1');
  app = addClient(a, 'an-app', ['--grant', 'password', '--scope', SCOPE]);
  const bot = addClient(a, 'ops-bot', ['--grant', 'client_credentials', '--scope', 'admin']);
  adminToken = (await post(a, 'token', { grant_type: 'client_credentials', scope: 'admin' }, { auth: basic(bot.client_id, bot.client_secret!) })).body.access_token;
});
after(async () => {
  await b?.cleanup();
  await a?.cleanup();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function tokenOf(username: string, password: string): Promise<string> {
  const r = await post(a, 'token', { grant_type: 'password', username, password, scope: SCOPE }, { auth: basic(app.client_id, app.client_secret!) });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.access_token;
}

test('deleted on one instance: the token is 401 on both within a second, the records 410, another user\'s kept, the events on the feed', async () => {
  const hanna = await tokenOf('hanna', 'hanna-password-1');
  const ivan = await tokenOf('ivan', 'ivan-password-1');
  const zoo = (await a.json('POST', '/v1/zoos', { name: 'Hanna\'s' }, bearer(hanna))).body.id as string;
  const animal = (await b.json('POST', `/v1/zoos/${zoo}/animals`, { name: 'Otto', species: 'otter' }, bearer(hanna))).body.id as string;
  const kept = (await a.json('POST', '/v1/zoos', { name: 'Ivan\'s' }, bearer(ivan))).body.id as string;
  for (const s of [a, b]) assert.equal((await s.json('GET', '/v1/zoos', undefined, bearer(hanna))).status, 200, 'cached on both');

  const jar = new CookieJar();
  const first = await page(a, jar, '/oauth/account');
  assert.equal((await page(a, jar, '/oauth/account', { csrf_token: hiddenField(first.html, 'csrf_token'), action: 'signin', username: 'hanna', password: 'hanna-password-1' })).status, 303);
  const csrf = hiddenField((await page(a, jar, '/oauth/account')).html, 'csrf_token');
  const started = Date.now();
  const done = await page(a, jar, '/oauth/account', { csrf_token: csrf, action: 'delete-account', password: 'hanna-password-1' });
  assert.equal(done.status, 303);
  for (const s of [a, b]) {
    let status = 0;
    while (Date.now() - started < 1000 && (status = (await s.json('GET', '/v1/zoos', undefined, bearer(hanna))).status) !== 401) await new Promise((r) => setTimeout(r, 50));
    assert.equal(status, 401, `401 within a second on ${s === a ? 'A' : 'B'}`);
  }
  const landing = await page(a, jar, done.location!);
  assert.equal(landing.status, 200);
  assert.match(landing.html, /Your account was deleted/);
  assert.match(landing.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);

  assert.equal((await b.json('GET', `/v1/zoos/${zoo}`, undefined, bearer(ivan))).status, 410);
  assert.equal((await b.json('GET', `/v1/animals/${animal}`, undefined, bearer(ivan))).status, 410);
  assert.equal((await b.json('GET', `/v1/zoos/${kept}`, undefined, bearer(ivan))).status, 200);
  const events = await b.json('GET', '/admin/v1/events?types=user.removed,record.deleted', undefined, bearer(adminToken));
  assert.equal(events.status, 200, events.text);
  assert.deepEqual(
    events.body.map((e: any) => [e.type, e.record_id]),
    [
      ['user.removed', events.body[0].record_id],
      ['record.deleted', animal],
      ['record.deleted', zoo],
    ],
  );
  assert.ok(events.body.every((e: any) => e.actor === `user:${events.body[0].record_id}`), 'each by the user');
});
