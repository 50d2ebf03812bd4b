import type { AppContext } from '../../contract/context.js';
import { accessTokenKey, constantTimeEqual, sha256 } from '../../platform/crypto/secrets.js';
import { audit } from '../audit.js';
import { authenticateClient } from './client-auth.js';
import { findAccessTokenWithGrant, findRefreshTokenRow } from '../store/grants.js';
import { oauthEndpoint } from './oauth-endpoint.js';
import { revokeAccessToken, revokeGrant } from '../tokens.js';

// POST {auth_url}/revocation (RFC 7009). Revoking an access token ends that token; revoking a
// refresh token ends the grant behind it (and so every token issued from it). An unknown,
// already invalid or other client's token is answered 200 as well, so nothing is revealed.

export function revocationEndpoint(ctx: AppContext) {
  return oauthEndpoint(async (request, params) => {
    const { client } = await authenticateClient(ctx, request, params);
    const token = params.require('token');
    const hash = sha256(token);
    const hint = params.get('token_type_hint');
    const lookups = hint === 'refresh_token' ? [revokeRefresh, revokeAccess] : [revokeAccess, revokeRefresh];
    for (const lookup of lookups) if (await lookup()) break;
    return {};

    async function revokeAccess(): Promise<boolean> {
      const key = accessTokenKey(token);
      const row = await findAccessTokenWithGrant(ctx.store, key.id);
      if (!row || !constantTimeEqual(row.hash, key.hash)) return false;
      if (row.client_id === client.id) {
        await revokeAccessToken(ctx, row.id);
        audit(ctx, request.log, 'token.revoked', { client_id: client.id, subject: row.subject, grant_id: row.grant_id, reason: 'access token revoked by the client' });
      }
      return true;
    }

    async function revokeRefresh(): Promise<boolean> {
      const row = await findRefreshTokenRow(ctx.store, hash);
      if (!row) return false;
      if (row.client_id === client.id) {
        await revokeGrant(ctx, row.grant_id, 'refresh token revoked by the client', `client:${client.id}`);
        audit(ctx, request.log, 'grant.revoked', { client_id: client.id, grant_id: row.grant_id, reason: 'refresh token revoked by the client' });
      }
      return true;
    }
  });
}
