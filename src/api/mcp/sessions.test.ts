import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import type { Caller } from '../../contract/caller.js';
import { hmacSha256 } from '../../platform/crypto/secrets.js';
import { ApiError } from '../../platform/http/errors.js';
import { SESSION_TTL_MS, issueSession, sessionOf } from './sessions.js';

// The session id verifies itself: what test/mcp-subscriptions.test.ts cannot reach from outside —
// an id past its expiry, one signed by a retired key, one for the same user through another client.

const ring = new Map([
  ['k1', 'first secret'],
  ['k2', 'second secret'],
]);
let current = 'k1';
const keys = {
  sign: async (text: string) => `${current}.${hmacSha256(ring.get(current)!, text)}`,
  macWith: async (id: string, text: string) => (ring.has(id) ? hmacSha256(ring.get(id)!, text) : null),
};
const ctx = { keys } as unknown as AppContext;
const alice = { subject: 'user:alice', clientId: 'agent' } as Caller;
const request = (header: string | undefined, caller: Caller) => ({ headers: header === undefined ? {} : { 'mcp-session-id': header }, caller }) as unknown as FastifyRequest;
const refused = (e: unknown) => e instanceof ApiError && e.status === 404;

test('a session is its caller’s until it expires; then 404', async () => {
  const now = Date.now();
  const id = await issueSession(ctx, alice, now);
  assert.match(id, /^[\x21-\x7e]+$/, 'visible ASCII, as the spec wants');
  const session = await sessionOf(ctx, request(id, alice), now + 1000);
  assert.equal(session?.subject, 'user:alice');
  assert.equal(session?.expiresAt, now + SESSION_TTL_MS);
  await assert.rejects(sessionOf(ctx, request(id, alice), now + SESSION_TTL_MS), refused);
  assert.equal(await sessionOf(ctx, request(undefined, alice), now), null, 'no header: stateless');
});

test('another user, or the same user through another client: 404', async () => {
  const id = await issueSession(ctx, alice);
  await assert.rejects(sessionOf(ctx, request(id, { ...alice, subject: 'user:bob' })), refused);
  await assert.rejects(sessionOf(ctx, request(id, { ...alice, clientId: 'other-agent' })), refused);
});

test('a rotated key still verifies the sessions it signed; an unknown key does not', async () => {
  const id = await issueSession(ctx, alice);
  current = 'k2';
  assert.ok(await sessionOf(ctx, request(id, alice)));
  ring.delete('k1');
  await assert.rejects(sessionOf(ctx, request(id, alice)), refused);
});
