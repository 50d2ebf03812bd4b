import { InvalidGrant, InvalidRequest } from '../../platform/http/errors.js';
import { sha256 } from '../../platform/crypto/secrets.js';
import { verifierMatches } from '../pkce.js';
import { claimCode, findCodeRow } from '../store/grants.js';
import { findGrant, issueTokens, issuesRefreshTokens, revokeAfterReplay, type Grant } from '../tokens.js';
import { amrOf } from '../oidc/id-token.js';
import { withAdminRuleNow, type TokenGrant } from './grant.js';
import { audienceOf, readTokenResource } from '../resource-request.js';

// RFC 6749 §4.1.3 with RFC 7636: a code is redeemed once, by the client it was issued to, with
// the redirect URI and PKCE verifier of its authorization request. A second redemption is a
// sign of theft: it fails and revokes the grant (every token) issued from the first (§4.1.2).

const USED = { code: 'is unknown, expired or already used' };

export const authorizationCodeGrant: TokenGrant = {
  grantType: 'authorization_code',
  parameters: ['code', 'redirect_uri', 'code_verifier', 'resource'],
  responseType: 'code',
  async handler(ctx, request, { client }, params) {
    const code = params.require('code');
    const redirectUri = params.get('redirect_uri');
    const verifier = params.get('code_verifier');
    const row = await findCodeRow(ctx.store, sha256(code));
    if (!row) throw new InvalidGrant('Unknown authorization code', USED);

    if (row.used_at !== null) {
      await revokeAfterReplay(ctx, request.log, row.grant_id, 'code.replayed', { client_id: row.client_id, subject: row.subject, reason: `presented by ${client.id}` });
      throw new InvalidGrant('The authorization code was already used', USED);
    }
    if (row.client_id !== client.id) throw new InvalidGrant('The authorization code was issued to another client', { code: 'was issued to another client' });
    if (Number(row.expires_at) <= Date.now()) throw new InvalidGrant('The authorization code has expired', USED);
    if (row.redirect_uri_given === 1 && redirectUri === undefined)
      // RFC 6749 §4.1.3: required when the authorization request had one; its absence is a missing parameter (§5.2).
      throw new InvalidRequest('redirect_uri is required: the authorization request had one', { redirect_uri: 'is required' });
    if (redirectUri !== undefined && redirectUri !== row.redirect_uri)
      throw new InvalidGrant('redirect_uri does not match the authorization request', { redirect_uri: 'must equal the one of the authorization request' });
    if (row.code_challenge !== null) {
      if (verifier === undefined) throw new InvalidGrant('code_verifier is required (PKCE)', { code_verifier: 'is required' });
      if (!verifierMatches(verifier, row.code_challenge)) throw new InvalidGrant('code_verifier does not match the code_challenge', { code_verifier: 'does not match' });
    } else if (verifier !== undefined) {
      // RFC 9700 §2.1.1: a verifier for a code issued without a challenge is a downgrade attempt.
      throw new InvalidGrant('code_verifier sent for a code issued without code_challenge', { code_verifier: 'unexpected' });
    }

    let scope = row.scope.split(' ').filter(Boolean);
    const expiresAt = Number(row.grant_expires_at);
    if (expiresAt <= Date.now()) throw new InvalidGrant('The validity chosen for this authorization has ended', { code: 'authorization expired' });
    // A code of remembered consent belongs to its grant from the start: redeemed under it, within
    // what the grant holds now (the user may have narrowed or revoked it since).
    let existing: Grant | null = null;
    if (row.grant_id !== null) {
      const grant = await findGrant(ctx, row.grant_id);
      if (!grant || grant.revokedAt !== null || grant.expiresAt <= Date.now()) throw new InvalidGrant('The authorization was revoked', { code: 'its authorization was revoked or has ended' });
      const held = grant.scope.split(' ');
      scope = scope.filter((s) => held.includes(s));
      if (scope.length === 0) throw new InvalidGrant('The authorization no longer holds this scope', { code: 'its authorization was narrowed' });
      existing = grant;
    }
    scope = await withAdminRuleNow(ctx, scope, client, row.subject, 'authorization_code');
    // RFC 8707 §2.2: one of the resources of the authorization request (the API when it named none).
    const audience = audienceOf(ctx.config, row.resources ?? null, readTokenResource(ctx.config, params));
    const response = await issueTokens(ctx, request.log, {
      grantType: 'authorization_code',
      client,
      subject: row.subject,
      grant: existing ? { existing } : { new: { scope, expiresAt } },
      scope,
      refreshScope: issuesRefreshTokens(ctx, client) ? scope : null,
      audience,
      refreshResources: row.resources ?? null,
      // Claimed and tied to its grant in one statement: of two racing redemptions exactly one wins.
      claim: async (tx, grantId) => claimCode(tx, row.hash, grantId!, Date.now()),
      audit: { event: 'grant.issued' },
      signIn: row.auth_time === null ? null : { authTime: Number(row.auth_time), sid: row.sid, nonce: row.nonce, amr: amrOf(row.amr) },
    });
    if (!response) {
      const used = await findCodeRow(ctx.store, row.hash);
      await revokeAfterReplay(ctx, request.log, used?.grant_id ?? null, 'code.replayed', { client_id: row.client_id, subject: row.subject, reason: 'concurrent redemption' });
      throw new InvalidGrant('The authorization code was already used', USED);
    }
    return response;
  },
};
