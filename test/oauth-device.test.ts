// The device authorization grant (RFC 8628, docs/oauth.md#devices-and-clis) through oauth4webapi:
// the device's request, its polls (authorization_pending, slow_down), the user's code entry, sign-in
// and consent at /oauth/device (the consent page of /authorize: scope and validity), the tokens of
// the approval once; and the attacks: a second or racing redemption, another client's code, an
// expired or denied one, guessed user codes (throttled per IP, nothing else changed), a form
// without its CSRF token.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as oauth from 'oauth4webapi';
import { startApp, type InProcessApp } from './helpers/app.js';
import { sqlOf } from '../src/platform/store/sql.js';
import { CookieJar, addClient, addUser, basic, hiddenField, introspect, page, post, sleep, type RegisteredClient } from './helpers/oauth.js';
import { deviceConsent, deviceDecide } from './helpers/device.js';
import { listGrants } from '../src/authserver/tokens.js';
import { Secret, TOTP } from 'otpauth';
import { confirmTotp, startTotpEnrolment } from '../src/authserver/model/factors.js';
import { findUserByUsername } from '../src/authserver/model/users.js';
import { createPgDatabase, pgAvailable } from './helpers/server.js';

const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';
let server: InProcessApp;
let cli: RegisteredClient;
let rs: RegisteredClient;
let web: RegisteredClient;
let as: oauth.AuthorizationServer;

const opts = (app: InProcessApp = server) => ({ [oauth.customFetch]: (url: string, init: RequestInit) => app.fetch(url, init as object) as unknown as Promise<Response> }) as const;
const tv: oauth.Client = { client_id: 'tv' };
const cliClient: oauth.Client = { client_id: 'cli' };

before(async () => {
  server = await startApp({ logLevel: 'info' });
  await addUser(server, 'dora', 'dora-password-1');
  await addClient(server, 'tv', ['--public', '--grant', DEVICE, '--grant', 'refresh_token', '--name', 'Living Room TV']);
  cli = await addClient(server, 'cli', ['--grant', DEVICE, '--name', 'Zoo CLI']);
  web = await addClient(server, 'web', ['--grant', 'authorization_code', '--redirect-uri', 'https://web.example/cb']);
  rs = await addClient(server, 'rs', ['--grant', 'client_credentials', '--introspect']);
  const issuer = new URL(server.url);
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...opts() }));
});
after(async () => {
  await server.cleanup();
});

async function startDevice(client: oauth.Client = tv, scope = 'zoos:read zoos:write', app = server, meta = as) {
  const auth = client === cliClient ? oauth.ClientSecretBasic(cli.client_secret!) : oauth.None();
  return oauth.processDeviceAuthorizationResponse(meta, client, await oauth.deviceAuthorizationRequest(meta, client, auth, { scope }, opts(app)));
}

async function poll(deviceCode: string, client: oauth.Client = tv, app = server, meta = as) {
  const auth = client === cliClient ? oauth.ClientSecretBasic(cli.client_secret!) : oauth.None();
  return oauth.processDeviceCodeResponse(meta, client, await oauth.deviceCodeGrantRequest(meta, client, auth, deviceCode, opts(app)));
}

async function pollError(deviceCode: string, client: oauth.Client = tv, app = server, meta = as): Promise<string> {
  try {
    await poll(deviceCode, client, app, meta);
  } catch (e) {
    assert.ok(e instanceof oauth.ResponseBodyError, String(e));
    return e.error;
  }
  assert.fail('the poll was answered with tokens');
}

test('metadata: the device authorization endpoint and the grant', () => {
  assert.equal(as.device_authorization_endpoint, `${server.url}/oauth/device_authorization`);
  assert.ok(as.grant_types_supported!.includes(DEVICE));
});

test('pending, slow_down, then the user approves a narrower scope for a chosen validity: the tokens carry it, once', async () => {
  const started = await startDevice();
  assert.match(started.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
  assert.equal(started.verification_uri, `${server.url}/oauth/device`);
  assert.equal(started.verification_uri_complete, `${server.url}/oauth/device?user_code=${started.user_code}`);
  assert.equal(started.expires_in, 600);
  assert.equal(started.interval, 5);

  assert.equal(await pollError(started.device_code), 'authorization_pending');
  assert.equal(await pollError(started.device_code), 'slow_down');
  const slowed = await post(server, 'token', { grant_type: DEVICE, device_code: started.device_code, client_id: 'tv' });
  assert.equal(slowed.body.error, 'slow_down');
  assert.match(slowed.body.error_description, /15 s/, 'the interval grew by 5 s at each early poll, stored with the code');

  // Typed in lower case without the dash: the same code.
  const jar = new CookieJar();
  const consent = await deviceConsent(server, jar, started.user_code.replace('-', '').toLowerCase(), 'dora', 'dora-password-1');
  assert.match(consent.html, /Only continue if you started this on a device you own: Living Room TV/);
  assert.ok(consent.html.includes(started.user_code));
  assert.match(consent.html, /go back to your device/);
  assert.match(consent.html, /name="ttl" value="86400"/, 'the validity choice of /authorize');
  assert.match(consent.headers.get('content-security-policy')!, /form-action 'self'/);
  const done = await deviceDecide(server, jar, consent, { scope: ['zoos:read'], ttl: 86400 });
  assert.equal(done.status, 200, done.html);
  assert.match(done.html, /Device connected/);

  // A decided request answers at once, whatever the interval.
  const tokens = await poll(started.device_code);
  assert.equal(tokens.scope, 'zoos:read');
  assert.ok(tokens.refresh_token, 'a client registered for refresh_token gets one');
  const info = await introspect(server, tokens.access_token, rs);
  assert.equal(info.active, true);
  assert.equal(info.client_id, 'tv');
  assert.equal(info.scope, 'zoos:read');
  const [grant] = await listGrants(server.ctx, { clientId: 'tv' });
  assert.equal(grant.scope, 'zoos:read');
  const validity = Date.parse(grant.expires_at) - Date.now();
  assert.ok(validity > 86_000_000 && validity <= 86_400_000, `the chosen validity (${validity} ms)`);

  assert.equal(await pollError(started.device_code), 'invalid_grant', 'single use');
  // The page says the code was used.
  const again = await page(server, jar, `/oauth/device?user_code=${started.user_code}`);
  assert.equal(again.status, 400);
  assert.match(again.html, /already used/);
});

test('denied: access_denied; the page ends there', async () => {
  const started = await startDevice(cliClient, 'zoos:read');
  const jar = new CookieJar();
  const consent = await deviceConsent(server, jar, started.user_code, 'dora', 'dora-password-1');
  const done = await deviceDecide(server, jar, consent, { decision: 'deny' });
  assert.equal(done.status, 200);
  assert.match(done.html, /Access denied/);
  assert.equal(await pollError(started.device_code, cliClient), 'access_denied');
  assert.ok(/grant\.denied.*device authorization/.test(server.output()), 'audited as a denial');
});

test('bound to its client: another client presenting the code gets invalid_grant', async () => {
  const started = await startDevice();
  assert.equal(await pollError(started.device_code, cliClient), 'invalid_grant');
  const r = await post(server, 'token', { grant_type: DEVICE, device_code: started.device_code }, { auth: basic('cli', cli.client_secret!) });
  assert.equal(r.body.detail.device_code, 'was issued to another client');
  assert.equal(await pollError('not-a-device-code'), 'invalid_grant');
});

test('two redemptions racing: tokens are issued once', async () => {
  const started = await startDevice();
  const jar = new CookieJar();
  await deviceDecide(server, jar, await deviceConsent(server, jar, started.user_code, 'dora', 'dora-password-1'));
  const answers = await Promise.all([0, 1, 2].map(() => post(server, 'token', { grant_type: DEVICE, device_code: started.device_code, client_id: 'tv' })));
  assert.deepEqual(answers.map((a) => a.status).sort(), [200, 400, 400]);
  assert.ok(answers.filter((a) => a.status === 400).every((a) => a.body.error === 'invalid_grant'));
});

test('per client: a client not registered for the grant is refused at both endpoints', async () => {
  const r = await post(server, 'device_authorization', {}, { auth: basic('web', web.client_secret!) });
  assert.equal(r.status, 400);
  assert.equal(r.body.error, 'unauthorized_client');
  const t = await post(server, 'token', { grant_type: DEVICE, device_code: 'x' }, { auth: basic('web', web.client_secret!) });
  assert.equal(t.body.error, 'unauthorized_client');
  const bad = await post(server, 'device_authorization', { client_id: 'cli', client_secret: 'wrong' });
  assert.equal(bad.status, 401);
  assert.equal(bad.body.error, 'invalid_client');
  const scope = await post(server, 'device_authorization', { client_id: 'tv', scope: 'nope:read' });
  assert.equal(scope.body.error, 'invalid_scope');
});

test('the /device forms carry a CSRF token: a post without it changes nothing', async () => {
  const started = await startDevice();
  const jar = new CookieJar();
  const consent = await deviceConsent(server, jar, started.user_code, 'dora', 'dora-password-1');
  const forged = await page(server, jar, '/oauth/device', { request: hiddenField(consent.html, 'request'), step: 'consent', decision: 'allow', scope: 'zoos:read', ttl: '3600' });
  assert.equal(forged.status, 403);
  assert.equal(await pollError(started.device_code), 'authorization_pending');
  assert.match(consent.headers.get('x-frame-options') ?? '', /deny/i);
});

test('expired: expired_token at the token endpoint, a clear page at /device; wrong codes are throttled per IP with nothing else changed', async () => {
  const short = await startApp({ config: { auth: { deviceCodeTtl: 1 } } });
  try {
    await addClient(short, 'tv', ['--public', '--grant', DEVICE]);
    await addUser(short, 'eve', 'eve-password-1');
    const issuer = new URL(short.url);
    const meta = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...opts(short) }));
    const old = await startDevice(tv, 'zoos:read', short, meta);
    assert.equal(old.expires_in, 1);
    await sleep(1100);
    assert.equal(await pollError(old.device_code, tv, short, meta), 'expired_token');
    const jar = new CookieJar();
    const expired = await page(short, jar, `/oauth/device?user_code=${old.user_code}`);
    assert.equal(expired.status, 400);
    assert.match(expired.html, /This code has expired/);

    const live = await startDevice(tv, 'zoos:read', short, meta);
    const entry = await page(short, jar, '/oauth/device');
    const csrf = hiddenField(entry.html, 'csrf_token');
    const wrong = live.user_code.startsWith('B') ? 'CCCC-CCCC' : 'BBBB-BBBB';
    for (let i = 0; i < 10; i++) {
      const r = await page(short, jar, '/oauth/device', { csrf_token: csrf, step: 'code', user_code: wrong });
      assert.equal(r.status, 400, `wrong code ${i + 1}`);
      assert.match(r.html, /That code is not valid/);
    }
    // The 11th: refused before any look-up, even for the right code.
    const refused = await page(short, jar, '/oauth/device', { csrf_token: csrf, step: 'code', user_code: live.user_code });
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    assert.match(refused.html, /Too many wrong codes/);
    const json = await short.fetch(`/oauth/device?user_code=${live.user_code}`, { headers: { accept: 'application/json' } });
    assert.equal(json.status, 429);
    assert.equal(await pollError(live.device_code, tv, short, meta), 'authorization_pending', 'the device code is untouched');
  } finally {
    await short.cleanup();
  }
});

test('attack: a public client starts at most 30 device authorizations in 10 minutes from one IP (429, Retry-After, nothing stored); a confidential client is not throttled', async () => {
  const own = await startApp();
  try {
    await addClient(own, 'tv', ['--public', '--grant', DEVICE]);
    const conf = await addClient(own, 'cli', ['--grant', DEVICE]);
    const count = async () => Number((await sqlOf(own.ctx.store).selectFrom('device_codes').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    // Refused for its scope: nothing stored, not counted.
    for (let i = 0; i < 3; i++) assert.equal((await post(own, 'device_authorization', { client_id: 'tv', scope: 'penguins:read' })).status, 400);
    for (let i = 0; i < 30; i++) assert.equal((await post(own, 'device_authorization', { client_id: 'tv', scope: 'zoos:read' })).status, 200, `start ${i + 1}`);
    const stored = await count();
    const res = await post(own, 'device_authorization', { client_id: 'tv', scope: 'zoos:read' });
    assert.equal(res.status, 429);
    assert.equal(res.body.error, 'too_many_requests');
    assert.ok(Number(res.headers.get('retry-after')) > 0);
    assert.equal(await count(), stored, 'nothing stored');
    for (let i = 0; i < 35; i++) assert.equal((await post(own, 'device_authorization', { scope: 'zoos:read' }, { auth: basic('cli', conf.client_secret!) })).status, 200, `confidential start ${i + 1}`);
  } finally {
    await own.cleanup();
  }
});

test("a browser app may start a device authorization from a client's origin (CORS, as at the token endpoint)", async () => {
  await addClient(server, 'tv-web', ['--public', '--grant', DEVICE, '--origin', 'https://tv.example']);
  const preflight = await server.fetch('/oauth/device_authorization', { method: 'OPTIONS', headers: { origin: 'https://tv.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } });
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://tv.example');
  const started = await server.fetch('/oauth/device_authorization', { method: 'POST', headers: { origin: 'https://tv.example', 'content-type': 'application/x-www-form-urlencoded' }, body: 'client_id=tv-web&scope=zoos%3Aread' });
  assert.equal(started.status, 200);
  assert.equal(started.headers.get('access-control-allow-origin'), 'https://tv.example');
  const elsewhere = await server.fetch('/oauth/device_authorization', { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
  assert.equal(elsewhere.headers.get('access-control-allow-origin'), null);
});

test('resource indicators (RFC 8707): resource=/mcp at /device_authorization gives a token whose aud is /mcp, and refreshes stay there; an unknown resource is invalid_target', async () => {
  const mcp = `${server.url}/mcp`;
  const started = await post(server, 'device_authorization', { client_id: 'tv', scope: 'zoos:read', resource: mcp });
  assert.equal(started.status, 200, JSON.stringify(started.body));
  const jar = new CookieJar();
  const consent = await deviceConsent(server, jar, started.body.user_code, 'dora', 'dora-password-1');
  assert.equal((await deviceDecide(server, jar, consent, { scope: ['zoos:read'], ttl: 86400 })).status, 200);
  const tokens = await post(server, 'token', { grant_type: DEVICE, device_code: started.body.device_code, client_id: 'tv' });
  assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  assert.equal((await introspect(server, tokens.body.access_token, rs)).aud, mcp);
  const refreshed = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: 'tv' });
  assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
  assert.equal((await introspect(server, refreshed.body.access_token, rs)).aud, mcp, 'the refresh token keeps the resource');
  const v1 = await post(server, 'token', { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token, client_id: 'tv', resource: `${server.url}/v1` });
  assert.equal(v1.body.error, 'invalid_target', 'not granted for /v1');
  const unknown = await post(server, 'device_authorization', { client_id: 'tv', scope: 'zoos:read', resource: 'https://evil.example/' });
  assert.equal(unknown.status, 400);
  assert.equal(unknown.body.error, 'invalid_target');
});

test('admin: the console offers the grant and registers a client with it', async () => {
  await addUser(server, 'root', 'root-password-1');
  assert.equal((await server.cli(['user', 'admin', 'root', 'on'])).status, 0);
  const jar = new CookieJar();
  const front = await page(server, jar, '/admin');
  const signed = await page(server, jar, '/admin/signin', { csrf_token: hiddenField(front.html, 'csrf_token'), username: 'root', password: 'root-password-1' });
  assert.equal(signed.status, 303, signed.html);
  const form = await page(server, jar, '/admin/clients');
  assert.match(form.html, new RegExp(`name="grant_types" value="${DEVICE}"`));
  const made = await page(server, jar, '/admin/clients', { csrf_token: hiddenField(form.html, 'csrf_token'), client_id: 'kiosk', name: 'Kiosk', type: 'public', grant_types: DEVICE });
  assert.equal(made.status, 201, made.html);
  assert.equal((await post(server, 'device_authorization', { client_id: 'kiosk' })).status, 200);
});

test('the same on PostgreSQL: pending, slow_down, approval, one of racing redemptions', { skip: !pgAvailable && 'PostgreSQL is not available (GATEHOUSE_TEST_PG=1)' }, async () => {
  const database = await createPgDatabase();
  const pg = await startApp({ database: database.url });
  try {
    await addClient(pg, 'tv', ['--public', '--grant', DEVICE]);
    await addUser(pg, 'dora', 'dora-password-1');
    const started = await post(pg, 'device_authorization', { client_id: 'tv', scope: 'zoos:read' });
    const redeem = () => post(pg, 'token', { grant_type: DEVICE, device_code: started.body.device_code, client_id: 'tv' });
    assert.equal((await redeem()).body.error, 'authorization_pending');
    assert.equal((await redeem()).body.error, 'slow_down');
    const jar = new CookieJar();
    await deviceDecide(pg, jar, await deviceConsent(pg, jar, started.body.user_code, 'dora', 'dora-password-1'));
    const answers = await Promise.all([redeem(), redeem(), redeem()]);
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 400, 400]);
  } finally {
    await pg.cleanup();
    await database.drop();
  }
});

test('the login of /authorize: a second factor is asked on /device too; "sign in as someone else" comes back to the code', async () => {
  await addUser(server, 'tess', 'tess-password-1');
  const tess = (await findUserByUsername(server.ctx, 'tess'))!;
  const enrolment = startTotpEnrolment(server.ctx, tess);
  const now = (steps = 0) => TOTP.generate({ secret: Secret.fromBase32(enrolment.secret), algorithm: 'SHA1', digits: 6, period: 30, timestamp: Date.now() + steps * 30_000 });
  await confirmTotp(server.ctx, tess, enrolment.sealed, now(-1), null);

  const started = await startDevice();
  const jar = new CookieJar();
  const entry = await page(server, jar, `/oauth/device?user_code=${started.user_code}`);
  const second = await page(server, jar, '/oauth/device', { request: hiddenField(entry.html, 'request'), csrf_token: hiddenField(entry.html, 'csrf_token'), step: 'login', username: 'tess', password: 'tess-password-1' });
  assert.equal(second.status, 200, second.html);
  assert.equal(hiddenField(second.html, 'step'), 'second-factor');
  const signed = await page(server, jar, '/oauth/device', {
    request: hiddenField(second.html, 'request'),
    csrf_token: hiddenField(second.html, 'csrf_token'),
    step: 'second-factor',
    pending: hiddenField(second.html, 'pending'),
    otp: now(),
  });
  assert.equal(signed.status, 303, signed.html);
  assert.equal(signed.location, `/oauth/device?user_code=${started.user_code}`);
  const consent = await page(server, jar, signed.location!);
  assert.match(consent.html, /Signed in as <strong>tess<\/strong>/);

  const out = await page(server, jar, '/oauth/device', { request: hiddenField(consent.html, 'request'), csrf_token: hiddenField(consent.html, 'csrf_token'), step: 'logout' });
  assert.equal(out.status, 303);
  assert.equal(out.location, `/oauth/device?user_code=${started.user_code}`);
  assert.match((await page(server, jar, out.location!)).html, /name="password"/);
  assert.equal(await pollError(started.device_code), 'authorization_pending');
});
