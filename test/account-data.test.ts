// The account page's "Your data" (docs/oauth.md, The account page): the export is a JSON
// attachment of the user's profile, grants, second factors and their own records only; deleting
// the account takes the password again, ends every token at once, deletes the user's records (each
// with its record.deleted) and not another user's, and a deletion cut short is finished later.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type InProcessApp } from './helpers/app.js';
import { CookieJar, addClient, addUser, basic, hiddenField, page, post, sleep, type RegisteredClient } from './helpers/oauth.js';
import { createPgDatabase, pgAvailable } from './helpers/server.js';
import { findUserByUsername, removeUser, userSubject } from '../src/authserver/model/users.js';
import { openContext, closeContext } from '../src/main/context.js';
import { sweepExpired } from '../src/main/sweeper.js';
import { readSettingsStartingWith } from '../src/platform/store/settings.js';

const SCOPE = 'zoos:read zoos:write animals:read animals:write articles:read articles:write orders:read';

interface Seeded {
  server: InProcessApp;
  app: RegisteredClient;
  adminToken: string;
}

async function seed(options: Parameters<typeof startApp>[0] = {}): Promise<Seeded> {
  // Large owners are made through the API: past the demo's request quota.
  const server = await startApp({ logLevel: 'info', config: { api: { rateLimit: { max: 100_000, window: 60 } } }, ...options });
  const app = await addClient(server, 'an-app', ['--name', 'An App', '--grant', 'password', '--scope', SCOPE]);
  const bot = await addClient(server, 'ops-bot', ['--grant', 'client_credentials', '--scope', 'admin']);
  const t = await post(server, 'token', { grant_type: 'client_credentials', scope: 'admin' }, { auth: basic(bot.client_id, bot.client_secret!) });
  assert.equal(t.status, 200, JSON.stringify(t.body));
  return { server, app, adminToken: t.body.access_token };
}

async function tokenOf(s: Seeded, username: string, password: string): Promise<string> {
  const r = await post(s.server, 'token', { grant_type: 'password', username, password, scope: SCOPE }, { auth: basic(s.app.client_id, s.app.client_secret!) });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.access_token;
}

const as = (s: Seeded, token: string) => ({
  post: (path: string, body: unknown) => s.server.json('POST', `/v1${path}`, body, { authorization: `Bearer ${token}` }),
  get: (path: string) => s.server.json('GET', `/v1${path}`, undefined, { authorization: `Bearer ${token}` }),
});

async function create(s: Seeded, token: string, path: string, body: unknown): Promise<string> {
  const r = await as(s, token).post(path, body);
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.id;
}

/** Many zoos, a few requests at a time. */
async function manyZoos(s: Seeded, token: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i += 50) ids.push(...(await Promise.all(Array.from({ length: Math.min(50, n - i) }, (_, j) => create(s, token, '/zoos', { name: `Zoo ${i + j}` })))));
  return ids;
}

async function signedIn(s: Seeded, username: string, password: string): Promise<{ jar: CookieJar; csrf: string }> {
  const jar = new CookieJar();
  const first = await page(s.server, jar, '/oauth/account');
  assert.equal((await page(s.server, jar, '/oauth/account', { csrf_token: hiddenField(first.html, 'csrf_token'), action: 'signin', username, password })).status, 303);
  const shown = await page(s.server, jar, '/oauth/account');
  assert.match(shown.html, new RegExp(`Signed in as <strong>${username}</strong>`));
  return { jar, csrf: hiddenField(shown.html, 'csrf_token') };
}

async function adminEvents(s: Seeded, types: string): Promise<any[]> {
  const out: any[] = [];
  let after = '';
  for (;;) {
    const r = await s.server.json('GET', `/admin/v1/events?types=${types}&limit=100${after}`, undefined, { authorization: `Bearer ${s.adminToken}` });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    out.push(...r.body);
    if (r.body.length < 100) return out;
    after = `&after=${r.body[r.body.length - 1].id}`;
  }
}

async function until(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) assert.fail(`timed out waiting: ${what}`);
    await sleep(50);
  }
}

let s: Seeded;
before(async () => {
  s = await seed();
  await addUser(s.server, 'ada', 'ada-password-1');
  await addUser(s.server, 'bob', 'bob-password-1');
  await addUser(s.server, 'cleo', 'cleo-password-1');
});
after(async () => s?.server.cleanup());

test('the page has "Your data" and, last, "Delete your account", both posting the CSRF token', async () => {
  const { jar } = await signedIn(s, 'ada', 'ada-password-1');
  const html = (await page(s.server, jar, '/oauth/account')).html;
  assert.match(html, /<h2 id="data-title">Your data<\/h2>[\s\S]*name="csrf_token"[\s\S]*value="export"/);
  assert.match(html, /<section class="block danger-zone"[\s\S]*Delete your account[\s\S]*name="csrf_token"[\s\S]*type="password"[^>]*name="password"[\s\S]*value="delete-account"[\s\S]*<\/section>\s*$/m);
  assert.ok(html.indexOf('delete-title') > html.indexOf('signout-title'), 'the deletion is the last section');
});

test('download my data: a no-store JSON attachment of the profile, grants, factors and only the user\'s own records, children included', async () => {
  const ada = await tokenOf(s, 'ada', 'ada-password-1');
  const bob = await tokenOf(s, 'bob', 'bob-password-1');
  const zoo = await create(s, ada, '/zoos', { name: 'Tierpark', city: 'Berlin' });
  const zoo2 = await create(s, ada, '/zoos', { name: 'Hellabrunn' });
  const animal = await create(s, ada, `/zoos/${zoo}/animals`, { name: 'Knut', species: 'polar bear' });
  const article = await create(s, ada, '/articles', { title: 'On bears' });
  const bobsZoo = await create(s, bob, '/zoos', { name: 'Bob\'s zoo' });
  const bobsAnimal = await create(s, bob, `/zoos/${bobsZoo}/animals`, { name: 'Rex', species: 'dog' });

  const { jar, csrf } = await signedIn(s, 'ada', 'ada-password-1');
  const res = await s.server.fetch('/oauth/account', {
    method: 'POST',
    headers: { accept: 'text/html', cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf_token: csrf, action: 'export' }).toString(),
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type')!, /^application\/json/);
  assert.match(res.headers.get('content-disposition')!, new RegExp(`^attachment; filename="gatehouse-ada-${new Date().toISOString().slice(0, 10)}\\.json"$`));
  assert.equal(res.headers.get('cache-control'), 'no-store');
  assert.equal(res.headers.get('content-length'), null, 'streamed, not measured whole');
  const text = await res.text();
  const doc = JSON.parse(text);
  assert.deepEqual(Object.keys(doc), ['exported_at', 'user', 'grants', 'second_factors', 'records']);
  assert.equal(doc.user.username, 'ada');
  assert.equal(doc.user.subject, userSubject((await findUserByUsername(s.server.ctx, 'ada'))!.id));
  assert.doesNotMatch(text, /password|hash|secret|argon2/i, 'no secret, nor a word of one');
  assert.deepEqual(doc.second_factors, []);
  assert.equal(doc.grants.length, 1);
  assert.equal(doc.grants[0].client_id, 'an-app');
  assert.equal(doc.grants[0].client_name, 'An App');
  assert.deepEqual(doc.grants[0].scope.split(' ').sort(), SCOPE.split(' ').sort());
  assert.match(doc.grants[0].last_used_at, /^\d{4}-/);
  assert.deepEqual(Object.keys(doc.records), ['zoos', 'orders', 'articles', 'animals'], 'every owner collection, parents first');
  assert.deepEqual(doc.records.zoos.map((r: any) => r.id).sort(), [zoo, zoo2].sort());
  assert.deepEqual(doc.records.animals.map((r: any) => r.id), [animal]);
  assert.deepEqual(doc.records.articles.map((r: any) => r.id), [article]);
  assert.deepEqual(doc.records.orders, []);
  assert.ok(!text.includes(bobsZoo) && !text.includes(bobsAnimal), 'nothing of another user');
  // Each record as the API shows it.
  assert.deepEqual(doc.records.zoos.find((r: any) => r.id === zoo), (await as(s, ada).get(`/zoos/${zoo}`)).body);
  assert.deepEqual(doc.records.animals[0], (await as(s, ada).get(`/animals/${animal}`)).body);

  // CSRF-checked; signed out, nothing is exported.
  const noCsrf = await page(s.server, jar, '/oauth/account', { action: 'export' });
  assert.equal(noCsrf.status, 403);
  const stranger = new CookieJar();
  const first = await page(s.server, stranger, '/oauth/account');
  const signedOut = await page(s.server, stranger, '/oauth/account', { csrf_token: hiddenField(first.html, 'csrf_token'), action: 'export' });
  assert.equal(signedOut.status, 401);
  assert.doesNotMatch(signedOut.html, /Tierpark/);
});

test('the export reads records page by page: an owner of more than a page gets every record once', async () => {
  const cleo = await tokenOf(s, 'cleo', 'cleo-password-1');
  const ids = await manyZoos(s, cleo, 450);
  const { jar, csrf } = await signedIn(s, 'cleo', 'cleo-password-1');
  const res = await page(s.server, jar, '/oauth/account', { csrf_token: csrf, action: 'export' });
  assert.equal(res.status, 200);
  const doc = JSON.parse(res.html);
  assert.deepEqual(doc.records.zoos.map((r: any) => r.id), [...ids].sort());
});

test('delete my account: a wrong password changes nothing; the right one ends access at once and deletes the user\'s records and only theirs', async () => {
  await addUser(s.server, 'dora', 'dora-password-1');
  const dora = await tokenOf(s, 'dora', 'dora-password-1');
  const bob = await tokenOf(s, 'bob', 'bob-password-1');
  const zoo = await create(s, dora, '/zoos', { name: 'Dora\'s zoo' });
  const animals = [await create(s, dora, `/zoos/${zoo}/animals`, { name: 'A', species: 'ant' }), await create(s, dora, `/zoos/${zoo}/animals`, { name: 'B', species: 'bee' })];
  const article = await create(s, dora, '/articles', { title: 'Mine' });
  const upload = await s.server.fetch(`/v1/articles/${article}/attachments`, { method: 'POST', headers: { authorization: `Bearer ${dora}`, 'content-type': 'application/pdf', 'content-disposition': 'attachment; filename="a.pdf"' }, body: '%PDF-1.4\n%%EOF\n' });
  assert.ok(upload.status < 300, `attachment uploaded: ${upload.status}`);
  const bobsZoo = await create(s, bob, '/zoos', { name: 'Bob keeps this' });
  const user = (await findUserByUsername(s.server.ctx, 'dora'))!;

  const { jar, csrf } = await signedIn(s, 'dora', 'dora-password-1');
  const wrong = await page(s.server, jar, '/oauth/account', { csrf_token: csrf, action: 'delete-account', password: 'not-her-password' });
  assert.equal(wrong.status, 400);
  assert.match(wrong.html, /The password is not correct. Nothing was changed./);
  assert.ok(await findUserByUsername(s.server.ctx, 'dora'));
  assert.equal((await as(s, dora).get(`/zoos/${zoo}`)).status, 200);
  const noCsrf = await page(s.server, jar, '/oauth/account', { action: 'delete-account', password: 'dora-password-1' });
  assert.equal(noCsrf.status, 403);
  assert.ok(await findUserByUsername(s.server.ctx, 'dora'), 'a CSRF-less post deletes nothing');

  const before = Number((await adminEvents(s, 'user.removed')).at(-1)?.id ?? 0);
  const done = await page(s.server, jar, '/oauth/account', { csrf_token: csrf, action: 'delete-account', password: 'dora-password-1' });
  assert.equal(done.status, 303);
  assert.match(done.location!, /\/oauth\/account\?done=deleted$/);
  assert.match(done.headers.get('set-cookie') ?? '', /gatehouse_session=;[^,]*Max-Age=0/i, 'the session cookie is cleared');
  const landing = await page(s.server, jar, done.location!);
  assert.equal(landing.status, 200);
  assert.match(landing.html, /Your account was deleted/);
  assert.match((await page(s.server, jar, '/oauth/account')).html, /Sign in to see the applications/, 'signed out');

  assert.equal((await as(s, dora).get('/zoos')).status, 401, 'the token ends at once');
  assert.equal(await findUserByUsername(s.server.ctx, 'dora'), null);
  const signIn = await post(s.server, 'token', { grant_type: 'password', username: 'dora', password: 'dora-password-1', scope: SCOPE }, { auth: basic(s.app.client_id, s.app.client_secret!) });
  assert.equal(signIn.status, 400, 'she can no longer sign in');
  for (const path of [`/zoos/${zoo}`, `/animals/${animals[0]}`, `/animals/${animals[1]}`, `/articles/${article}`])
    assert.equal((await as(s, bob).get(path)).status, 410, `${path} was deleted`);
  assert.equal((await as(s, bob).get(`/zoos/${bobsZoo}`)).status, 200, 'another user\'s record is untouched');

  const removed = (await adminEvents(s, 'user.removed')).filter((e) => Number(e.id) > before);
  assert.deepEqual(removed.map((e) => [e.record_id, e.actor]), [[user.id, userSubject(user.id)]]);
  const deleted = (await adminEvents(s, 'record.deleted')).filter((e) => e.owner === userSubject(user.id));
  assert.deepEqual(deleted.map((e) => `${e.collection}/${e.record_id}`).sort(), [`zoos/${zoo}`, `animals/${animals[0]}`, `animals/${animals[1]}`, `articles/${article}`].sort());
  assert.ok(deleted.every((e) => e.actor === userSubject(user.id) && e.data === null));
  assert.ok(Number(deleted.find((e) => e.collection === 'zoos')!.id) > Math.max(...deleted.filter((e) => e.collection === 'animals').map((e) => Number(e.id))), 'children before their parent');
  assert.ok(Number(removed[0].id) < Math.min(...deleted.map((e) => Number(e.id))), 'the user goes first');
  assert.match(s.server.output(), /"event":"user.deleted"[^\n]*"subject":"user:/);
  assert.equal((await readSettingsStartingWith(s.server.ctx.store, 'records-deletion:')).size, 0, 'no deletion left to resume');
});

test('a large owner gets the answer before all records are deleted; the rest follows in the background', async () => {
  await addUser(s.server, 'emil', 'emil-password-1');
  const emil = await tokenOf(s, 'emil', 'emil-password-1');
  const bob = await tokenOf(s, 'bob', 'bob-password-1');
  const ids = await manyZoos(s, emil, 1300);
  const { jar, csrf } = await signedIn(s, 'emil', 'emil-password-1');
  const done = await page(s.server, jar, '/oauth/account', { csrf_token: csrf, action: 'delete-account', password: 'emil-password-1' });
  assert.equal(done.status, 303);
  assert.match(done.location!, /\?done=deleting$/);
  assert.equal((await as(s, emil).get('/zoos')).status, 401);
  assert.match((await page(s.server, jar, done.location!)).html, /Your records are being deleted/);
  await until('every record deleted', async () => (await as(s, bob).get(`/zoos/${ids.at(-1)}`)).status === 410 && (await readSettingsStartingWith(s.server.ctx.store, 'records-deletion:')).size === 0);
  for (const id of [ids[0], ids[650], ids[1299]]) assert.equal((await as(s, bob).get(`/zoos/${id}`)).status, 410);
});

/** A deletion whose process died after the user's removal (and a first batch): another process finishes it once the lease has run out. */
async function resumedAfterCrash(s: Seeded): Promise<void> {
  await addUser(s.server, 'fritz', 'fritz-password-1');
  await addUser(s.server, 'gina', 'gina-password-1');
  const fritz = await tokenOf(s, 'fritz', 'fritz-password-1');
  const gina = await tokenOf(s, 'gina', 'gina-password-1');
  const ids = (await manyZoos(s, fritz, 450)).sort();
  const animal = await create(s, fritz, `/zoos/${ids[400]}/animals`, { name: 'Late', species: 'owl' });
  const hers = await create(s, gina, '/zoos', { name: 'Gina\'s' });
  const ctx = s.server.ctx;
  const subject = userSubject((await findUserByUsername(ctx, 'fritz'))!.id);
  // The removal with its marker commits; the records' deletion stops after its first batch.
  await removeUser(ctx, 'fritz', subject, (tx) => ctx.ownedRecords.scheduleDeletion(tx, subject, subject));
  await assert.rejects(
    ctx.ownedRecords.deleteAll(subject, subject, () => {
      throw new Error('the process dies');
    }),
    /the process dies/,
  );
  assert.equal((await as(s, fritz).get('/zoos')).status, 401);
  const left = async () => (await Promise.all([ids[0], ids[449], animal].map(async (id, i) => (await as(s, gina).get(`/${i === 2 ? 'animals' : 'zoos'}/${id}`)).status)));
  assert.deepEqual(await left(), [410, 403, 403], 'the first batch went, the rest is still there');
  assert.equal((await sweepExpired(ctx)).records_of_deleted_accounts, 0, 'a deletion under way is left to its process until its lease ends');

  // Another process on the same database (a restart): its sweeper finishes the deletion.
  const other = await openContext(ctx.config);
  try {
    const swept = await sweepExpired(other, Date.now() + 61_000);
    assert.equal(swept.records_of_deleted_accounts, 451 - 200);
  } finally {
    await closeContext(other);
  }
  assert.deepEqual(await left(), [410, 410, 410]);
  assert.equal((await as(s, gina).get(`/zoos/${hers}`)).status, 200);
  assert.equal((await readSettingsStartingWith(ctx.store, 'records-deletion:')).size, 0);
  const deleted = (await adminEvents(s, 'record.deleted')).filter((e) => e.owner === subject);
  assert.equal(deleted.length, 451, 'each record deleted once, with its event');
  assert.equal(new Set(deleted.map((e) => e.record_id)).size, 451);
}

test('a deletion cut short by a crash is finished by the sweeper of the next process', async () => {
  const file = await seed({ file: true });
  try {
    await resumedAfterCrash(file);
  } finally {
    await file.server.cleanup();
  }
});

test('the same on PostgreSQL', { skip: !pgAvailable && 'PostgreSQL is not available (GATEHOUSE_TEST_PG=1)' }, async () => {
  const db = await createPgDatabase();
  const pg = await seed({ database: db.url });
  try {
    await resumedAfterCrash(pg);
  } finally {
    await pg.server.cleanup();
    await db.drop();
  }
});
