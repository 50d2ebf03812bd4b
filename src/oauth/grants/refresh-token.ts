import { OAuthError } from '../../http/errors.js';
import { sha256 } from '../../security/secrets.js';
import { audit } from '../audit.js';
import { parseScope } from '../scopes.js';
import { findGrant, mintTokens, revokeGrant, saveTokens } from '../tokens.js';
import type { TokenGrant } from './grant.js';

// RFC 6749 §6 with rotation (RFC 9700 §4.14.2): every refresh returns a new refresh token and
// retires the old one; presenting a retired one again revokes the whole grant. The new tokens
// never outlive the grant, i.e. the validity the user chose.

const invalidGrant = (description: string) => new OAuthError('invalid_grant', description, 400, { refresh_token: description });

export const refreshTokenGrant: TokenGrant = {
  grantType: 'refresh_token',
  parameters: ['refresh_token', 'scope'],
  async handler(ctx, request, { client }, params) {
    const presented = params.require('refresh_token');
    const db = ctx.store.db;
    const row = await db.selectFrom('refresh_tokens').selectAll().where('hash', '=', sha256(presented)).executeTakeFirst();
    if (!row || row.client_id !== client.id) throw invalidGrant('Unknown refresh token');
    const grantRow = await findGrant(db, row.grant_id);

    if (row.used_at !== null) {
      await revokeGrant(ctx, row.grant_id, 'refresh token reused');
      audit(request.log, 'refresh.reused', { client_id: client.id, subject: grantRow?.subject, grant_id: row.grant_id, reason: 'a rotated refresh token was presented again' });
      throw invalidGrant('The refresh token was already used; the authorization is revoked');
    }
    const now = Date.now();
    if (!grantRow || grantRow.revoked_at !== null) throw invalidGrant('The authorization was revoked');
    if (Number(row.expires_at) <= now || Number(grantRow.expires_at) <= now) throw invalidGrant('The refresh token has expired');

    const held = row.scope.split(' ').filter(Boolean);
    let scope = held;
    const requested = params.get('scope');
    if (requested !== undefined) {
      const parsed = parseScope(requested);
      if (parsed === null || parsed.length === 0)
        throw new OAuthError('invalid_scope', 'The scope parameter is malformed', 400, { scope: 'must be space-separated scope values' });
      const wider = parsed.filter((s) => !held.includes(s));
      if (wider.length)
        throw new OAuthError('invalid_scope', `Scope exceeds the original grant: ${wider.join(' ')}`, 400, { scope: `not granted: ${wider.join(' ')}` });
      scope = held.filter((s) => parsed.includes(s));
    }

    const grant = { id: grantRow.id, clientId: client.id, subject: grantRow.subject, scope: grantRow.scope, expiresAt: Number(grantRow.expires_at) };
    // RFC 6749 §6: the new refresh token keeps the scope of the one it replaces.
    const minted = await mintTokens(ctx, { client, grant, scope, refreshScope: held });
    const response = await db.transaction().execute(async (trx) => {
      const claim = await trx
        .updateTable('refresh_tokens')
        .set({ used_at: now })
        .where('hash', '=', row.hash)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      if (Number(claim.numUpdatedRows) === 0) return null;
      return saveTokens(trx, minted);
    });
    if (!response) {
      await revokeGrant(ctx, row.grant_id, 'refresh token reused');
      audit(request.log, 'refresh.reused', { client_id: client.id, subject: grant.subject, grant_id: grant.id, reason: 'concurrent refresh' });
      throw invalidGrant('The refresh token was already used; the authorization is revoked');
    }
    audit(request.log, 'token.refreshed', { client_id: client.id, subject: grant.subject, grant_id: grant.id, scope: response.scope });
    return response;
  },
};
