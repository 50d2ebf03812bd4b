// The login throttle holds under a burst: 40 password grants at once (39 wrong passwords, then the
// right one) with loginThrottle.max 5 check at most 5 passwords — every other answer is 429 with
// Retry-After, the right password included — on SQLite, on PostgreSQL without Redis, on PostgreSQL
// + Redis, and across two instances sharing both. A password never checked cannot be guessed.
// Spawned server (test/helpers/server.ts), not in process: one and two instances on SQLite, PostgreSQL and Redis under a burst.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { TEST_REDIS_URL, createPgDatabase, pgAvailable, redisAvailable, startServer, type TestServer } from './helpers/server.js';
import { CookieJar, addClient, addUser, basic, hiddenField, type RegisteredClient } from './helpers/oauth.js';

const MAX = 5;
const config = { server: { trustProxy: true }, auth: { loginThrottle: { max: MAX, window: 60 } } };
const noPg = !pgAvailable && 'needs PostgreSQL';
const noPgRedis = !(pgAvailable && redisAvailable) && 'needs PostgreSQL and Redis';

let sqlite: TestServer;
let pgOnly: TestServer | undefined;
let a: TestServer | undefined;
let b: TestServer | undefined;
const databases: { url: string; drop(): Promise<void> }[] = [];
const secrets = new Map<TestServer, RegisteredClient>();
// Keys this file leaves in the shared test Redis (deleted after), so no other file is throttled by it.
const redisKeys: string[] = [];

function setUp(server: TestServer, ...users: string[]) {
  for (const user of users) addUser(server, user, `${user}-password-1`);
  secrets.set(server, addClient(server, 'app', ['--grant', 'password']));
}

before(async () => {
  sqlite = await startServer({ config });
  setUp(sqlite, 'ann', 'ada');
  if (!noPg) {
    const db = await createPgDatabase();
    databases.push(db);
    pgOnly = await startServer({ env: { DATABASE_URL: db.url }, config });
    setUp(pgOnly, 'ann');
  }
  if (!noPgRedis) {
    const db = await createPgDatabase();
    databases.push(db);
    const env = { DATABASE_URL: db.url, REDIS_URL: TEST_REDIS_URL };
    a = await startServer({ env, config });
    b = await startServer({ env, config });
    setUp(a);
  }
});

after(async () => {
  if (redisKeys.length) {
    const { Redis } = await import('ioredis');
    const redis = new Redis(TEST_REDIS_URL);
    await redis.del(...redisKeys);
    await redis.quit();
  }
  for (const s of [sqlite, pgOnly, a, b]) await s?.cleanup();
  for (const db of databases) await db.drop();
});

/** A fresh IP per burst (trustProxy), so bursts do not share the per-IP count. */
function freshIp(): string {
  const [x, y, z] = randomBytes(3);
  return `10.${x}.${y}.${z}`;
}

function grant(server: TestServer, client: RegisteredClient, username: string, password: string, ip: string) {
  return server
    .fetch('/oauth/token', {
      method: 'POST',
      headers: {
        accept: 'application/json',
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basic(client.client_id, client.client_secret!),
        'x-forwarded-for': ip,
        'x-forwarded-proto': 'https',
      },
      body: new URLSearchParams({ grant_type: 'password', username, password }).toString(),
    })
    .then(async (res) => ({ status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as { error?: string } }));
}

/** 39 wrong passwords then the right one, all in flight at once, spread over `servers` in turn. */
async function burst(servers: TestServer[], client: RegisteredClient, username: string) {
  const ip = freshIp();
  redisKeys.push(`login:user:${username}`, `login:ip:${ip}`);
  const attempts = Array.from({ length: 40 }, (_, i) =>
    grant(servers[i % servers.length], client, username, i === 39 ? `${username}-password-1` : `guess-${i}`, ip),
  );
  return Promise.all(attempts);
}

function assertThrottled(results: Awaited<ReturnType<typeof burst>>) {
  const statuses = results.map((r) => r.status);
  const checked = statuses.filter((s) => s !== 429);
  assert.ok(checked.length <= MAX, `at most ${MAX} passwords checked, saw ${checked.length} answers other than 429: ${statuses.join(' ')}`);
  assert.ok(checked.length >= 1, 'some attempts are checked');
  for (const s of checked) assert.equal(s, 400, `a checked wrong password is 400: ${statuses.join(' ')}`);
  assert.equal(results[39].status, 429, 'the right password, arriving after the window is spent, is refused unchecked');
  for (const r of results.filter((x) => x.status === 429)) {
    assert.equal(r.body.error, 'too_many_requests');
    assert.ok(Number(r.retryAfter) >= 1, `Retry-After: ${r.retryAfter}`);
  }
}

test('40 password grants at once with max 5: at most 5 passwords checked (SQLite)', async () => {
  assertThrottled(await burst([sqlite], secrets.get(sqlite)!, 'ann'));
});

test('40 password grants at once with max 5: at most 5 passwords checked (PostgreSQL, no Redis)', { skip: noPg }, async () => {
  assertThrottled(await burst([pgOnly!], secrets.get(pgOnly!)!, 'ann'));
});

test('40 password grants at once with max 5: at most 5 passwords checked (PostgreSQL + Redis)', { skip: noPgRedis }, async () => {
  const user = `race-${randomBytes(4).toString('hex')}`;
  addUser(a!, user, `${user}-password-1`);
  assertThrottled(await burst([a!], secrets.get(a!)!, user));
});

test('40 password grants at once on two instances sharing PostgreSQL + Redis: at most 5 passwords checked in all', { skip: noPgRedis }, async () => {
  const user = `race-${randomBytes(4).toString('hex')}`;
  addUser(a!, user, `${user}-password-1`);
  assertThrottled(await burst([a!, b!], secrets.get(a!)!, user));
});

test('40 sign-ins at once on the admin console: at most 5 passwords checked, the rest a 429 page (SQLite)', async () => {
  const ip = freshIp();
  const forwarded = { 'x-forwarded-for': ip, 'x-forwarded-proto': 'https' };
  const jar = new CookieJar();
  const front = await sqlite.fetch('/admin', { headers: { accept: 'text/html', ...forwarded } });
  jar.store(front.headers as unknown as Headers);
  const csrf = hiddenField(await front.text(), 'csrf_token');
  const answers = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      sqlite
        .fetch('/admin/signin', {
          method: 'POST',
          headers: { accept: 'text/html', cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded', ...forwarded },
          body: new URLSearchParams({ csrf_token: csrf, username: 'ada', password: i === 39 ? 'ada-password-1' : `guess-${i}` }).toString(),
        })
        .then(async (res) => ({ status: res.status, retryAfter: res.headers.get('retry-after'), html: await res.text() })),
    ),
  );
  const statuses = answers.map((r) => r.status);
  assert.ok(statuses.filter((s) => s !== 429).length <= MAX, statuses.join(' '));
  assert.equal(answers[39].status, 429, statuses.join(' '));
  for (const r of answers.filter((x) => x.status === 429)) {
    assert.match(r.html, /Too many failed attempts/);
    assert.ok(Number(r.retryAfter) >= 1);
  }
});
