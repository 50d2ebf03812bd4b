import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { accessTokenKey, sha256 } from '../security/secrets.js';
import { storedAccessToken } from '../access/verify-token.js';
import { announceRevocation } from '../access/revocation-notices.js';
import { audit } from './audit.js';
import { authenticateClient } from './clients.js';
import { bodyParams } from './params.js';
import { noStore } from './token-endpoint.js';
import { revokeGrant } from './tokens.js';

// POST {auth_url}/revocation (RFC 7009). Revoking an access token ends that token; revoking a
// refresh token ends the grant behind it (and so every token issued from it). An unknown,
// already invalid or other client's token is answered 200 as well, so nothing is revealed.

export function revocationEndpoint(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    noStore(reply);
    const params = bodyParams(request);
    params.requireSingle();
    const { client } = await authenticateClient(ctx, request, params);
    const token = params.require('token');
    const hash = sha256(token);
    const db = ctx.store.db;
    const hint = params.get('token_type_hint');
    const lookups = hint === 'refresh_token' ? [revokeRefresh, revokeAccess] : [revokeAccess, revokeRefresh];
    for (const lookup of lookups) if (await lookup()) break;
    return reply.code(200).type('application/json; charset=utf-8').send({});

    async function revokeAccess(): Promise<boolean> {
      const row = await storedAccessToken(db, accessTokenKey(token));
      if (!row) return false;
      if (row.client_id === client.id) {
        await db.updateTable('access_tokens').set({ revoked_at: Date.now() }).where('id', '=', row.id).where('revoked_at', 'is', null).execute();
        await announceRevocation(ctx);
        audit(request.log, 'token.revoked', { client_id: client.id, subject: row.subject, grant_id: row.grant_id, reason: 'access token revoked by the client' });
      }
      return true;
    }

    async function revokeRefresh(): Promise<boolean> {
      const row = await db.selectFrom('refresh_tokens').select(['client_id', 'grant_id']).where('hash', '=', hash).executeTakeFirst();
      if (!row) return false;
      if (row.client_id === client.id) {
        await revokeGrant(ctx, row.grant_id, 'refresh token revoked by the client');
        audit(request.log, 'grant.revoked', { client_id: client.id, grant_id: row.grant_id, reason: 'refresh token revoked by the client' });
      }
      return true;
    }
  };
}
