import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { accessTokenKey, sha256 } from '../security/secrets.js';
import { authenticateClient, invalidClient } from './clients.js';
import { bodyParams } from './params.js';
import { noStore } from './token-endpoint.js';
import { activeFrom, storedAccessToken } from '../access/verify-token.js';
import { findGrant } from './tokens.js';
import { issuerOf } from './metadata.js';

// POST {auth_url}/introspection (RFC 7662), for confidential clients (e.g. a resource server
// registered as a client). Anything that is not a currently valid token is { active: false }.

const INACTIVE = { active: false } as const;

export function introspectionEndpoint(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    noStore(reply);
    const params = bodyParams(request);
    params.requireSingle();
    const { client } = await authenticateClient(ctx, request, params);
    if (client.public)
      throw invalidClient('Introspection needs a confidential client', { client_id: 'must be a confidential client' });
    const token = params.require('token');
    const hint = params.get('token_type_hint');
    const kinds = hint === 'refresh_token' ? [refresh, access] : [access, refresh];
    let result: Record<string, unknown> | null = null;
    for (const kind of kinds) if ((result = await kind(token))) break;
    return reply.code(200).type('application/json; charset=utf-8').send(result ?? INACTIVE);
  };

  async function access(presented: string): Promise<Record<string, unknown> | null> {
    const row = await storedAccessToken(ctx.store.db, accessTokenKey(presented));
    if (!row) return null;
    const token = activeFrom(row);
    if (!token) return INACTIVE;
    return describe(token.subject, token.clientId, [...token.scopes].join(' '), token.issuedAt, token.expiresAt, token.tokenType);
  }

  async function refresh(presented: string): Promise<Record<string, unknown> | null> {
    const hash = sha256(presented);
    const row = await ctx.store.db.selectFrom('refresh_tokens').selectAll().where('hash', '=', hash).executeTakeFirst();
    if (!row) return null;
    const grant = await findGrant(ctx.store.db, row.grant_id);
    const now = Date.now();
    if (row.used_at !== null || Number(row.expires_at) <= now || !grant || grant.revoked_at !== null || Number(grant.expires_at) <= now)
      return INACTIVE;
    return describe(grant.subject, row.client_id, row.scope, Number(row.created_at), Number(row.expires_at), 'refresh_token');
  }

  async function describe(subject: string, clientId: string, scope: string, iat: number, exp: number, tokenType: string) {
    const out: Record<string, unknown> = {
      active: true,
      scope,
      client_id: clientId,
      token_type: tokenType,
      exp: Math.floor(exp / 1000),
      iat: Math.floor(iat / 1000),
      sub: subject,
      iss: issuerOf(ctx.config),
    };
    if (subject.startsWith('user:')) {
      const user = await ctx.store.db.selectFrom('users').select('username').where('id', '=', subject.slice(5)).executeTakeFirst();
      if (user) out.username = user.username;
    }
    return out;
  }
}
