// DPoP across instances (docs/oauth.md#proof-of-possession): a proof's jti is accepted once by the
// whole deployment — through Redis when configured, else through the database's replay cache —
// so a proof accepted by instance A is refused by instance B, at the resource API and at the
// token endpoint. Both instances share one publicUrl (as behind a load balancer), so the proof's
// htu is right for either and only the jti can refuse it.
// Spawned server (test/helpers/server.ts), not in process: two processes on one PostgreSQL (with and without Redis).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID, createHash } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import { createPgDatabase, freePort, pgAvailable, redisAvailable, startServer, TEST_REDIS_URL, type TestServer } from './helpers/server.js';
import { addClient, basic } from './helpers/oauth.js';

type KeyPair = { publicKey: CryptoKey; privateKey: CryptoKey };
interface Instance {
  server: TestServer;
  /** Where it listens (its publicUrl is the pair's). */
  origin: string;
}
interface Pair {
  publicUrl: string;
  a: Instance;
  b: Instance;
  drop(): Promise<void>;
}

const pairs: Pair[] = [];

async function startPair(redis: boolean): Promise<Pair> {
  const database = await createPgDatabase();
  const [portA, portB] = [await freePort(), await freePort()];
  const publicUrl = `https://127.0.0.1:${portA}`;
  const env = { DATABASE_URL: database.url, ...(redis ? { REDIS_URL: TEST_REDIS_URL } : {}) };
  const config = { server: { publicUrl } };
  const a = await startServer({ env, config, args: ['--port', String(portA)] });
  const b = await startServer({ env, config, args: ['--port', String(portB)] });
  const pair = { publicUrl, a: { server: a, origin: `https://127.0.0.1:${portA}` }, b: { server: b, origin: `https://127.0.0.1:${portB}` }, drop: () => database.drop() };
  pairs.push(pair);
  return pair;
}

after(async () => {
  for (const p of pairs) {
    await Promise.all([p.a.server.cleanup(), p.b.server.cleanup()]);
    await p.drop();
  }
});

async function proof(key: KeyPair, htm: string, htu: string, extra: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT({ htm, htu, jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ...extra })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(key.publicKey) })
    .sign(key.privateKey);
}

async function tokenRequest(at: Instance, secret: string, dpop: string) {
  const res = await at.server.fetch(`${at.origin}/oauth/token`, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded', authorization: basic('dpop-scale', secret), dpop },
    body: 'grant_type=client_credentials&scope=zoos%3Aread',
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

async function zoos(at: Instance, token: string, dpop: string) {
  const res = await at.server.fetch(`${at.origin}/v1/zoos`, { headers: { accept: 'application/json', authorization: `DPoP ${token}`, dpop } });
  return { status: res.status, challenge: res.headers.get('www-authenticate') ?? '' };
}

async function replayAcross(pair: Pair): Promise<void> {
  const client = addClient(pair.a.server, 'dpop-scale', ['--grant', 'client_credentials']);
  const key = (await generateKeyPair('ES256', { extractable: true })) as KeyPair;
  const tokenUrl = `${pair.publicUrl}/oauth/token`;

  // The token endpoint: a proof used at A is refused at B.
  const first = await proof(key, 'POST', tokenUrl);
  const issued = await tokenRequest(pair.a, client.client_secret!, first);
  assert.equal(issued.status, 200, JSON.stringify(issued.body));
  assert.equal(issued.body.token_type, 'DPoP');
  const again = await tokenRequest(pair.b, client.client_secret!, first);
  assert.equal(again.status, 400);
  assert.equal(again.body.error, 'invalid_dpop_proof');
  assert.match(again.body.error_description, /used before/);

  // The resource API: B accepts a fresh proof for the token A issued, and refuses A's used one.
  const token = issued.body.access_token as string;
  const ath = createHash('sha256').update(token).digest('base64url');
  const atA = await proof(key, 'GET', `${pair.publicUrl}/v1/zoos`, { ath });
  assert.equal((await zoos(pair.a, token, atA)).status, 200);
  const replayed = await zoos(pair.b, token, atA);
  assert.equal(replayed.status, 401);
  assert.match(replayed.challenge, /^DPoP .*error="invalid_dpop_proof".*used before/);
  assert.equal((await zoos(pair.b, token, await proof(key, 'GET', `${pair.publicUrl}/v1/zoos`, { ath }))).status, 200);
}

test('PostgreSQL and Redis: a proof accepted by instance A is refused by instance B', { skip: !(pgAvailable && redisAvailable) && 'PostgreSQL or Redis not reachable (GATEHOUSE_TEST_PG=1 GATEHOUSE_TEST_REDIS=1)' }, async () => {
  await replayAcross(await startPair(true));
});

test('PostgreSQL without Redis: the same through the database replay cache', { skip: !pgAvailable && 'PostgreSQL not reachable (GATEHOUSE_TEST_PG=1)' }, async () => {
  await replayAcross(await startPair(false));
});

