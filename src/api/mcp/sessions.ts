import type { FastifyRequest } from 'fastify';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { AppContext } from '../../contract/context.js';
import type { Caller } from '../../contract/caller.js';
import { constantTimeEqual, randomSecret } from '../../platform/crypto/secrets.js';
import { notFound } from '../../platform/http/errors.js';
import type { SessionRow } from '../store/mcp-sessions.js';

// MCP sessions (docs/mcp.md#following-changes) without anything kept in one process: the
// `Mcp-Session-Id` answered to `initialize` verifies itself — its random id, the token's subject and
// client, its expiry, under an HMAC with the server's keys, which every instance shares (as cursors
// are signed, ../cursor.ts) — so any instance checks it with no read. What a session follows is in
// the database (../store/mcp-sessions.ts). A POST without the header is answered as before, stateless.

/** How long a session lasts from its `initialize`: then 404, and the client initializes again (the spec's rule). */
export const SESSION_TTL_MS = 24 * 3600_000;
const HEADER = 'mcp-session-id';
const MAX_LENGTH = 1024;
/** Signed apart from cursors and every other HMAC of the key ring: one cannot stand for the other. */
const PURPOSE = 'mcp-session.';

export type McpSession = SessionRow & { /** The header as the client sends it. */ header: string };

/** A new session for this caller: the value of `Mcp-Session-Id`. */
export async function issueSession(ctx: AppContext, caller: Caller, now = Date.now()): Promise<string> {
  const payload = Buffer.from(JSON.stringify({ i: randomSecret(16), s: caller.subject, c: caller.clientId, e: now + SESSION_TTL_MS })).toString('base64url');
  return `${payload}.${await ctx.keys.sign(PURPOSE + payload)}`;
}

/** The session id to answer a POST with: a new one for an `initialize`, none otherwise (without a schema check for every other POST). */
export function sessionToAnswer(ctx: AppContext, caller: Caller, body: unknown): Promise<string> | null {
  const initializes = typeof body === 'object' && body !== null && (body as { method?: unknown }).method === 'initialize' && isInitializeRequest(body);
  return initializes ? issueSession(ctx, caller) : null;
}

const unknownSession = () =>
  notFound('Unknown MCP session', { 'mcp-session-id': 'not a session of this token (forged, expired or another caller’s): send initialize without it for a new one' });

/**
 * The session a request names in `Mcp-Session-Id`, checked: null when it names none; 404 — the
 * spec's answer for a session the server does not know — when the id is forged or altered, has
 * expired, or was issued to another user or client than the request's token's. The one check of
 * every request that carries the header (POST, GET).
 */
export async function sessionOf(ctx: AppContext, request: FastifyRequest, now = Date.now()): Promise<McpSession | null> {
  const header = request.headers[HEADER];
  if (header === undefined) return null;
  const caller = request.caller!;
  if (typeof header !== 'string' || header.length > MAX_LENGTH) throw unknownSession();
  const parts = header.split('.');
  if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]+$/.test(p))) throw unknownSession();
  const [payload, keyId, mac] = parts;
  const expected = await ctx.keys.macWith(keyId, PURPOSE + payload);
  if (expected === null || !constantTimeEqual(expected, mac)) throw unknownSession();
  let body: { i?: unknown; s?: unknown; c?: unknown; e?: unknown };
  try {
    body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw unknownSession();
  }
  if (typeof body.i !== 'string' || typeof body.e !== 'number' || body.e <= now) throw unknownSession();
  if (body.s !== caller.subject || body.c !== caller.clientId) throw unknownSession();
  return { id: body.i, subject: caller.subject, clientId: caller.clientId, expiresAt: body.e, header };
}
