import { AccessDenied, AuthorizationPending, ExpiredToken, InvalidGrant, SlowDown } from '../../platform/http/errors.js';
import { sha256 } from '../../platform/crypto/secrets.js';
import { write } from '../../platform/store/write-path.js';
import { DEVICE_CODE_GRANT, SLOW_DOWN_STEP } from '../device-authorization.js';
import { findUserById } from '../model/users.js';
import { amrOf } from '../oidc/id-token.js';
import { claimDeviceCode, findDeviceCode, recordPoll } from '../store/device-codes.js';
import { issueTokens, issuesRefreshTokens } from '../tokens.js';
import { audienceOf, readTokenResource } from '../resource-request.js';
import { withAdminRuleNow, type TokenGrant } from './grant.js';

// RFC 8628 §3.4–3.5: the device polls with its device code. While the user has not decided, the
// answer is authorization_pending, or slow_down when it polls faster than its interval (which then
// grows by 5 s, stored with the request: any instance answers the next poll). A decided request
// answers at once: access_denied, or the tokens of the approval — once; a second redemption, or
// another client's, is invalid_grant. Past its lifetime: expired_token.

const UNKNOWN = { device_code: 'is unknown or already used' };

export const deviceCodeGrant: TokenGrant = {
  grantType: DEVICE_CODE_GRANT,
  parameters: ['device_code', 'resource'],
  async handler(ctx, request, { client }, params) {
    const presented = params.require('device_code');
    const row = await findDeviceCode(ctx.store, sha256(presented));
    if (!row) throw new InvalidGrant('Unknown device code', UNKNOWN);
    if (row.client_id !== client.id) throw new InvalidGrant('The device code was issued to another client', { device_code: 'was issued to another client' });
    if (row.used_at !== null) throw new InvalidGrant('The device code was already used', UNKNOWN);
    const now = Date.now();
    if (Number(row.expires_at) <= now) throw new ExpiredToken('The device code has expired: start again', { device_code: 'has expired' });
    if (row.decision === 'denied') throw new AccessDenied('The user denied access');
    if (row.decision === null) {
      if (await write(ctx.store, (tx) => recordPoll(tx, row.hash, now, SLOW_DOWN_STEP)))
        throw new AuthorizationPending('The user has not decided yet', { device_code: 'waiting for the user' });
      throw new SlowDown(`Polled faster than the interval: wait ${row.poll_interval + SLOW_DOWN_STEP} s between requests`, {
        device_code: `poll every ${row.poll_interval + SLOW_DOWN_STEP} s at most`,
      });
    }

    // RFC 8707 §2.2: one of the resources of the device authorization request (the API when it named none).
    const audience = audienceOf(ctx.config, row.resources ?? null, readTokenResource(ctx.config, params));
    const subject = row.subject!;
    const expiresAt = Number(row.grant_expires_at);
    if (expiresAt <= now) throw new InvalidGrant('The validity chosen for this authorization has ended', { device_code: 'authorization expired' });
    // The user may have been removed since the approval.
    if (!(await findUserById(ctx, subject.slice('user:'.length)))) throw new InvalidGrant('The user who approved this request no longer exists', UNKNOWN);
    const scope = await withAdminRuleNow(ctx, row.granted_scope!.split(' ').filter(Boolean), client, subject, DEVICE_CODE_GRANT);
    const response = await issueTokens(ctx, request.log, {
      grantType: DEVICE_CODE_GRANT,
      client,
      subject,
      grant: { new: { scope, expiresAt } },
      scope,
      audience,
      refreshResources: row.resources ?? null,
      refreshScope: issuesRefreshTokens(ctx, client) ? scope : null,
      // Claimed and tied to its grant in one statement: of two racing redemptions exactly one wins.
      claim: (tx, grantId) => claimDeviceCode(tx, row.hash, grantId!, Date.now()),
      audit: { event: 'grant.issued' },
      signIn: row.auth_time === null ? null : { authTime: Number(row.auth_time), sid: row.sid, amr: amrOf(row.amr) },
    });
    if (!response) throw new InvalidGrant('The device code was already used', UNKNOWN);
    return response;
  },
};
