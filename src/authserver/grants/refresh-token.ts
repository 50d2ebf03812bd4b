import { InvalidDpopProof, InvalidGrant, InvalidScope } from '../../platform/http/errors.js';
import { sha256 } from '../../platform/crypto/secrets.js';
import { parseScope } from '../scope-request.js';
import { claimRefreshToken, findRefreshTokenRow } from '../store/grants.js';
import { findGrant, issueTokens, proofKeyOf, revokeAfterReplay } from '../tokens.js';
import { amrOf } from '../oidc/id-token.js';
import { withAdminRuleNow, type TokenGrant } from './grant.js';
import { audienceOf, readTokenResource } from '../resource-request.js';

// RFC 6749 §6 with rotation (RFC 9700 §4.14.2): every refresh returns a new refresh token and
// retires the old one; presenting a retired one again revokes the whole grant. The new tokens
// never outlive the grant, i.e. the validity the user chose.

const REUSED = 'The refresh token was already used; the authorization is revoked';

export const refreshTokenGrant: TokenGrant = {
  grantType: 'refresh_token',
  parameters: ['refresh_token', 'scope', 'resource'],
  async handler(ctx, request, { client }, params) {
    const presented = params.require('refresh_token');
    const row = await findRefreshTokenRow(ctx.store, sha256(presented));
    if (!row || row.client_id !== client.id) throw new InvalidGrant('Unknown refresh token', { refresh_token: 'Unknown refresh token' });
    // RFC 9449 §5: a bound refresh token is refreshed only with a proof by the same key.
    if (row.jkt !== null && row.jkt !== proofKeyOf(client))
      throw new InvalidDpopProof('The refresh token is bound to a DPoP key: send a proof signed by that key', { dpop: 'not signed by the key the refresh token is bound to' });
    const grant = await findGrant(ctx, row.grant_id);

    if (row.used_at !== null) {
      await revokeAfterReplay(ctx, request.log, row.grant_id, 'refresh.reused', { client_id: client.id, subject: grant?.subject, reason: 'a rotated refresh token was presented again' });
      throw new InvalidGrant(REUSED, { refresh_token: REUSED });
    }
    const now = Date.now();
    if (!grant || grant.revokedAt !== null) throw new InvalidGrant('The authorization was revoked', { refresh_token: 'The authorization was revoked' });
    if (Number(row.expires_at) <= now || grant.expiresAt <= now) throw new InvalidGrant('The refresh token has expired', { refresh_token: 'The refresh token has expired' });

    const held = row.scope.split(' ').filter(Boolean);
    // Under the admin rule as it stands now: the client's registration or the user's right may have changed.
    const holding = await withAdminRuleNow(ctx, held, client, grant.subject, 'refresh_token');
    let scope = holding;
    const requested = params.get('scope');
    if (requested !== undefined) {
      const parsed = parseScope(requested);
      if (parsed === null || parsed.length === 0)
        throw new InvalidScope('The scope parameter is malformed', { scope: 'must be space-separated scope values' });
      const wider = parsed.filter((s) => !held.includes(s));
      if (wider.length)
        throw new InvalidScope(`Scope exceeds the original grant: ${wider.join(' ')}`, { scope: `not granted: ${wider.join(' ')}` });
      scope = holding.filter((s) => parsed.includes(s));
      if (scope.length === 0) throw new InvalidScope('The admin scope is no longer granted to this client', { scope: 'admin: not for this user or client' });
    }

    // RFC 8707 §2.2: narrowed to one of the resources the refresh token holds; the new one keeps them all.
    const audience = audienceOf(ctx.config, row.resources ?? null, readTokenResource(ctx.config, params));
    const response = await issueTokens(ctx, request.log, {
      grantType: 'refresh_token',
      client,
      subject: grant.subject,
      grant: { existing: grant },
      scope,
      // RFC 6749 §6: the new refresh token keeps the scope of the one it replaces.
      refreshScope: holding,
      audience,
      refreshResources: row.resources ?? null,
      claim: (tx) => claimRefreshToken(tx, row.hash, now),
      audit: { event: 'token.refreshed' },
      // OpenID Connect Core §12.2: a new ID token about the same sign-in (its auth_time and session), without a nonce.
      signIn: row.auth_time === null ? null : { authTime: Number(row.auth_time), sid: row.sid, amr: amrOf(row.amr) },
    });
    if (!response) {
      await revokeAfterReplay(ctx, request.log, row.grant_id, 'refresh.reused', { client_id: client.id, subject: grant.subject, reason: 'concurrent refresh' });
      throw new InvalidGrant(REUSED, { refresh_token: REUSED });
    }
    return response;
  },
};
