// Webhooks (docs/events.md#webhooks) against a real local HTTPS receiver that verifies every delivery
// with the `standardwebhooks` package: CLI and admin API, filters, retries after a 500, no redirect
// followed, SSRF refusals (https only, private addresses, a name that resolves to one), and after a
// SIGKILL right after a burst of writes every acknowledged write's event is still delivered.
// Spawned server (test/helpers/server.ts), not in process: webhook delivery runs in the serving process, and the CLI beside it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import dns from 'node:dns/promises';
import os from 'node:os';
import { Webhook } from 'standardwebhooks';
import { startServer, tempDir, testConfig, writeConfig, type TestServer } from './helpers/server.js';
import { apiClient, assertApiError, type ApiClient } from './helpers/tokens.js';
import { addClient, basic, post } from './helpers/oauth.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';

let server: TestServer;
let strict: TestServer; // the default: no private addresses
let receiver: Receiver;
let a: ApiClient;
let adminToken: string;
let strictAdmin: string;
const dir = tempDir('gatehouse-webhooks-');

async function adminTokenOf(s: TestServer): Promise<string> {
  const bot = addClient(s, 'hook-admin', ['--grant', 'client_credentials', '--scope', 'admin']);
  const t = await post(s, 'token', { grant_type: 'client_credentials', scope: 'admin' }, { auth: basic(bot.client_id, bot.client_secret!) });
  return t.body.access_token;
}

const admin = (method: string, path: string, body?: unknown, s = server, token = adminToken) =>
  s.json(method, `/admin/v1${path}`, body, { authorization: `Bearer ${token}` });

before(async () => {
  receiver = await startReceiver(dir);
  const env = { NODE_EXTRA_CA_CERTS: receiver.caFile };
  server = await startServer({ env, config: { events: { webhooks: { allowPrivateNetworks: true } } } });
  strict = await startServer({ env });
  a = await apiClient(server, 'hook-a');
  adminToken = await adminTokenOf(server);
  strictAdmin = await adminTokenOf(strict);
});
after(async () => {
  await Promise.all([server?.cleanup(), strict?.cleanup()]);
  await receiver?.close();
});

function verify(secret: string, r: { headers: Record<string, string>; body: string }) {
  return new Webhook(secret).verify(r.body, {
    'webhook-id': r.headers['webhook-id'],
    'webhook-timestamp': r.headers['webhook-timestamp'],
    'webhook-signature': r.headers['webhook-signature'],
  }) as { id: string; type: string; collection: string; record_id: string; data: Record<string, unknown> };
}

test('admin API: a webhook delivers signed events it subscribes to within a second; its attempts are listed', async () => {
  const made = await admin('POST', '/webhooks', { url: `${receiver.url}/zoos`, events: ['record.created'], collections: ['zoos'] });
  assert.equal(made.status, 201, made.text);
  assert.match(made.body.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
  assert.equal(made.headers.get('location'), `${server.url}/admin/v1/webhooks/${made.body.id}`);
  const shown = await admin('GET', `/webhooks/${made.body.id}`);
  assert.equal(shown.body.secret, undefined);
  assert.deepEqual(shown.body.events, ['record.created']);

  await a.json('POST', '/v1/orders', { item: 'hay', quantity: 1 }); // another collection: not delivered
  const t0 = Date.now();
  const zoo = (await a.json('POST', '/v1/zoos', { name: 'Hooked', city: 'Kyiv', founded: 1908 })).body;
  const got = await receiver.waitFor((all) => all.some((r) => r.path === '/zoos'), 5000);
  const delivery = got.find((r) => r.path === '/zoos')!;
  assert.ok(delivery.at - t0 < 1500, `delivered ${delivery.at - t0} ms after the write`);
  assert.equal(delivery.method, 'POST');
  assert.match(delivery.headers['content-type'], /^application\/json/);
  assert.match(delivery.headers['webhook-signature'], /^v1,/);
  const event = verify(made.body.secret, delivery);
  assert.equal(event.type, 'record.created');
  assert.equal(event.record_id, zoo.id);
  assert.equal(event.data.name, 'Hooked');
  assert.equal(delivery.headers['webhook-id'], `evt_${event.id}`);
  // A wrong secret does not verify.
  assert.throws(() => verify('whsec_' + Buffer.alloc(32, 1).toString('base64'), delivery));
  // Only that zoo: the order was filtered out.
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(receiver.received.filter((r) => r.path === '/zoos').length, 1);

  const attempts = await admin('GET', `/webhooks/${made.body.id}/deliveries`);
  assert.equal(attempts.status, 200);
  assert.equal(attempts.body.length, 1);
  assert.deepEqual(Object.keys(attempts.body[0]).sort(), ['attempt', 'duration_ms', 'error', 'event_id', 'id', 'outcome', 'status_code', 'time'].sort());
  assert.equal(attempts.body[0].event_id, event.id);
  assert.equal(attempts.body[0].status_code, 204);
  assert.equal(attempts.body[0].outcome, 'succeeded');
  assert.equal(attempts.body[0].error, null);
  assert.equal((await admin('DELETE', `/webhooks/${made.body.id}`)).status, 204);
  assert.equal((await admin('GET', `/webhooks/${made.body.id}`)).status, 404);
});

test('a 500 is retried after 5 s; a redirect is not followed and counts as a failed attempt', async () => {
  let calls = 0;
  receiver.respond = (r) => {
    if (r.path === '/flaky') return { status: ++calls === 1 ? 500 : 200 };
    if (r.path === '/moved') return { status: 302, headers: { location: `${receiver.url}/elsewhere` } };
    return { status: 204 };
  };
  const flaky = (await admin('POST', '/webhooks', { url: `${receiver.url}/flaky`, collections: ['articles'] })).body;
  const moved = (await admin('POST', '/webhooks', { url: `${receiver.url}/moved`, collections: ['articles'] })).body;
  await a.json('POST', '/v1/articles', { title: 'Retry me' });
  const got = await receiver.waitFor((all) => all.filter((r) => r.path === '/flaky').length >= 2, 12_000);
  const flakyHits = got.filter((r) => r.path === '/flaky');
  const gap = flakyHits[1].at - flakyHits[0].at;
  assert.ok(gap >= 4500 && gap < 8000, `retried after ${gap} ms`);
  // Same message id and payload on the retry, each signed.
  assert.equal(flakyHits[0].headers['webhook-id'], flakyHits[1].headers['webhook-id']);
  assert.equal(verify(flaky.secret, flakyHits[1]).type, 'record.created');
  let attempts: { attempt: number; status_code: number; outcome: string; error: string }[] = [];
  for (let i = 0; i < 25 && attempts.length < 2; i++) {
    attempts = (await admin('GET', `/webhooks/${flaky.id}/deliveries`)).body;
    if (attempts.length < 2) await new Promise((r) => setTimeout(r, 200));
  }
  assert.deepEqual(
    attempts.map((x: { attempt: number; status_code: number; outcome: string }) => [x.attempt, x.status_code, x.outcome]),
    [
      [2, 200, 'succeeded'],
      [1, 500, 'failed'],
    ],
  );
  assert.equal(attempts[1].error, 'HTTP 500');
  // The redirect: one failed attempt, nothing ever asked at its target.
  assert.ok(receiver.received.some((r) => r.path === '/moved'));
  assert.ok(!receiver.received.some((r) => r.path === '/elsewhere'));
  const movedAttempts = (await admin('GET', `/webhooks/${moved.id}/deliveries`)).body;
  assert.equal(movedAttempts[0].status_code, 302);
  assert.equal(movedAttempts[0].outcome, 'failed');
  assert.match(movedAttempts[0].error, /redirect .* not followed/);
  const pending = await admin('GET', `/webhooks/${moved.id}/deliveries`);
  assert.equal(pending.headers.get('x-pending-deliveries'), '1');
  for (const id of [flaky.id, moved.id]) assert.equal((await admin('DELETE', `/webhooks/${id}`)).status, 204);
  receiver.respond = () => ({ status: 204 });
});

test('SSRF: http, loopback and private addresses are refused; a name resolving to one is refused at delivery', async (t) => {
  for (const url of ['http://example.com/hook', 'https://127.0.0.1/hook', 'https://10.1.2.3/hook', 'https://[::1]/hook', 'https://localhost/hook', 'https://169.254.169.254/latest', 'not a url'])
    assertApiError(await admin('POST', '/webhooks', { url }, strict, strictAdmin), 400, ['url']);
  const cli = strict.cli(['webhook', 'add', 'https://192.168.1.1/hook']);
  assert.equal(cli.status, 1);
  assert.match(cli.stderr, /<url>: must not point at a loopback or private address/);
  // A host name is checked where it resolves, when delivering (DNS rebinding).
  const host = os.hostname();
  const resolved = await dns.lookup(host).catch(() => null);
  if (!resolved || !/^(127\.|10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.)/.test(resolved.address)) {
    // Reported, not silently passed: the delivery-time check needs a host name that resolves to a private address.
    t.skip(`the delivery-time check not run: ${host} resolves to ${resolved?.address ?? 'nothing'}, not a private address`);
    return;
  }
  const hook = await admin('POST', '/webhooks', { url: `https://${host}:${receiver.port}/rebound`, collections: ['zoos'] }, strict, strictAdmin);
  assert.equal(hook.status, 201, hook.text);
  const client = await apiClient(strict, 'hook-strict');
  const before = receiver.received.length;
  await client.json('POST', '/v1/zoos', { name: 'Rebound', city: 'X', founded: 1999 });
  let attempts: { error: string; status_code: number | null }[] = [];
  for (let i = 0; i < 30 && attempts.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 200));
    attempts = (await admin('GET', `/webhooks/${hook.body.id}/deliveries`, undefined, strict, strictAdmin)).body;
  }
  assert.equal(attempts.length, 1);
  assert.equal(attempts[0].status_code, null);
  assert.match(attempts[0].error, /non-public address/);
  assert.equal(receiver.received.slice(before).filter((r) => r.path === '/rebound').length, 0);
});

test('CLI: webhook add prints the secret once, list never shows it, remove; bad input is one line naming the flag', async () => {
  const added = server.cli(['webhook', 'add', `${receiver.url}/cli`, '--events', 'record.created,record.deleted', '--collections', 'zoos']);
  assert.equal(added.status, 0, added.stderr);
  const made = JSON.parse(added.stdout);
  assert.match(made.secret, /^whsec_/);
  assert.deepEqual(made.events, ['record.created', 'record.deleted']);
  const list = server.cli(['webhook', 'list', '--json']);
  assert.equal(list.status, 0, list.stderr);
  const listed = JSON.parse(list.stdout).find((w: { id: string }) => w.id === made.id);
  assert.equal(listed.url, `${receiver.url}/cli`);
  assert.ok(!list.stdout.includes('whsec_'));
  const bad = server.cli(['webhook', 'add', `${receiver.url}/x`, '--events', 'record.made']);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /--events: unknown event type record\.made/);
  assert.equal(server.cli(['webhook', 'remove', made.id]).status, 0);
  const again = server.cli(['webhook', 'remove', made.id]);
  assert.equal(again.status, 1);
  assert.match(again.stderr, /no webhook/);
  // The admin feed recorded the three changes.
  const events = (await admin('GET', '/events?types=webhook.created,webhook.removed&limit=100')).body;
  assert.ok(events.some((e: { type: string; record_id: string }) => e.type === 'webhook.removed' && e.record_id === made.id));
});

test('SIGKILL right after a burst of writes: after a restart every acknowledged write is delivered', async () => {
  const own = await startServer({ env: { NODE_EXTRA_CA_CERTS: receiver.caFile }, config: { events: { webhooks: { allowPrivateNetworks: true } } } });
  const dataDir = own.dataDir;
  const configFile = own.configFile;
  try {
    const token = await adminTokenOf(own);
    // Slow answers keep deliveries in flight when the process dies.
    receiver.respond = (r) => (r.path === '/burst' ? { status: 200, delayMs: 300 } : { status: 204 });
    const hook = (await admin('POST', '/webhooks', { url: `${receiver.url}/burst`, collections: ['zoos'] }, own, token)).body;
    const client = await apiClient(own, 'hook-burst');
    const acknowledged: string[] = [];
    await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const res = await client.json('POST', '/v1/zoos', { name: `burst ${i}`, city: 'Kill', founded: 1900 + i });
        if (res.status === 201) acknowledged.push(res.body.id);
      }),
    );
    own.child.kill('SIGKILL');
    await new Promise((r) => own.child.once('exit', r));
    const restarted = await startServer({ dataDir, configFile, env: { NODE_EXTRA_CA_CERTS: receiver.caFile } });
    try {
      const delivered = () => new Set(receiver.received.filter((r) => r.path === '/burst').map((r) => verify(hook.secret, r).record_id));
      await receiver.waitFor(() => acknowledged.every((id) => delivered().has(id)), 60_000);
      assert.equal(acknowledged.length, 40);
    } finally {
      await restarted.stop();
    }
  } finally {
    await own.cleanup();
    receiver.respond = () => ({ status: 204 });
  }
});

test('a webhook the config no longer allows is named at start-up: its address, a collection gone', async () => {
  const own = await startServer({ config: { events: { webhooks: { allowPrivateNetworks: true } } } });
  try {
    const token = await adminTokenOf(own);
    const hook = await admin('POST', '/webhooks', { url: `${receiver.url}/later`, collections: ['zoos', 'articles'] }, own, token);
    assert.equal(hook.status, 201, hook.text);
    const quiet = await admin('POST', '/webhooks', { url: 'https://hooks.example.com/fine', collections: ['zoos'] }, own, token);
    assert.equal(quiet.status, 201, quiet.text);
    await own.stop();
    const config = testConfig();
    delete config.collections.articles;
    const restarted = await startServer({ dataDir: own.dataDir, configFile: writeConfig(own.dataDir, config) });
    try {
      // The log is written asynchronously: the lines may follow the banner by a moment.
      const warnings = () => restarted.output().split('\n').filter((l) => l.includes('"msg":"webhook ')).map((l) => JSON.parse(l).msg as string);
      const deadline = Date.now() + 10_000;
      while (warnings().length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const warned = warnings();
      assert.deepEqual(warned, [
        `webhook ${hook.body.id} (${receiver.url}/later): the address must not point at a loopback or private address (events.webhooks.allowPrivateNetworks allows it), so every delivery fails until the webhook is changed or removed`,
        `webhook ${hook.body.id} (${receiver.url}/later): articles is no longer a collection of the config: nothing of it is delivered`,
      ]);
    } finally {
      await restarted.stop();
    }
  } finally {
    await own.cleanup();
  }
});
