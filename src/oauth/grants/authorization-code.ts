import { OAuthError } from '../../http/errors.js';
import { sha256 } from '../../security/secrets.js';
import { audit } from '../audit.js';
import { verifierMatches } from '../pkce.js';
import { createGrant, issuesRefreshTokens, mintTokens, newGrantId, revokeGrant, saveTokens } from '../tokens.js';
import type { TokenGrant } from './grant.js';

// RFC 6749 §4.1.3 with RFC 7636: a code is redeemed once, by the client it was issued to, with
// the redirect URI and PKCE verifier of its authorization request. A second redemption is a
// sign of theft: it fails and revokes the grant (every token) issued from the first (§4.1.2).

const invalidGrant = (description: string, detail: Record<string, string>) => new OAuthError('invalid_grant', description, 400, detail);

export const authorizationCodeGrant: TokenGrant = {
  grantType: 'authorization_code',
  parameters: ['code', 'redirect_uri', 'code_verifier'],
  async handler(ctx, request, { client }, params) {
    const code = params.require('code');
    const redirectUri = params.get('redirect_uri');
    const verifier = params.get('code_verifier');
    const db = ctx.store.db;
    const row = await db.selectFrom('authorization_codes').selectAll().where('hash', '=', sha256(code)).executeTakeFirst();
    if (!row) throw invalidGrant('Unknown authorization code', { code: 'is unknown, expired or already used' });

    if (row.used_at !== null) {
      // Replay: whoever holds the code now, the tokens issued from it are no longer trusted.
      if (row.grant_id) await revokeGrant(ctx, row.grant_id, 'code replayed');
      audit(request.log, 'code.replayed', { client_id: row.client_id, subject: row.subject, grant_id: row.grant_id, reason: `presented by ${client.id}` });
      throw invalidGrant('The authorization code was already used', { code: 'is unknown, expired or already used' });
    }
    if (row.client_id !== client.id) throw invalidGrant('The authorization code was issued to another client', { code: 'was issued to another client' });
    if (Number(row.expires_at) <= Date.now()) throw invalidGrant('The authorization code has expired', { code: 'is unknown, expired or already used' });
    if (row.redirect_uri_given === 1 ? redirectUri !== row.redirect_uri : redirectUri !== undefined && redirectUri !== row.redirect_uri)
      throw invalidGrant('redirect_uri does not match the authorization request', { redirect_uri: 'must equal the one of the authorization request' });
    if (row.code_challenge !== null) {
      if (verifier === undefined) throw invalidGrant('code_verifier is required (PKCE)', { code_verifier: 'is required' });
      if (!verifierMatches(verifier, row.code_challenge)) throw invalidGrant('code_verifier does not match the code_challenge', { code_verifier: 'does not match' });
    } else if (verifier !== undefined) {
      // RFC 9700 §2.1.1: a verifier for a code issued without a challenge is a downgrade attempt.
      throw invalidGrant('code_verifier sent for a code issued without code_challenge', { code_verifier: 'unexpected' });
    }

    const scope = row.scope.split(' ').filter(Boolean);
    const grant = { id: newGrantId(), clientId: client.id, subject: row.subject, scope: row.scope, expiresAt: Number(row.grant_expires_at) };
    if (grant.expiresAt <= Date.now()) throw invalidGrant('The validity chosen for this authorization has ended', { code: 'authorization expired' });
    const minted = await mintTokens(ctx, { client, grant, scope, refreshScope: issuesRefreshTokens(client) ? scope : null });
    const response = await db.transaction().execute(async (trx) => {
      // Claimed and tied to its grant in one statement: of two racing redemptions exactly one wins.
      const claim = await trx
        .updateTable('authorization_codes')
        .set({ used_at: Date.now(), grant_id: grant.id })
        .where('hash', '=', row.hash)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      if (Number(claim.numUpdatedRows) === 0) return null;
      await createGrant(trx, { ...grant, scope });
      return saveTokens(trx, minted);
    });
    if (!response) {
      const used = await db.selectFrom('authorization_codes').select('grant_id').where('hash', '=', row.hash).executeTakeFirst();
      if (used?.grant_id) await revokeGrant(ctx, used.grant_id, 'code replayed');
      audit(request.log, 'code.replayed', { client_id: row.client_id, subject: row.subject, grant_id: used?.grant_id, reason: 'concurrent redemption' });
      throw invalidGrant('The authorization code was already used', { code: 'is unknown, expired or already used' });
    }
    audit(request.log, 'grant.issued', { grant_type: 'authorization_code', client_id: client.id, subject: grant.subject, grant_id: grant.id, scope: grant.scope });
    return response;
  },
};
