import type { AppContext } from '../contract/context.js';
import { purgeLoginWindows } from './login-throttle.js';
import { purgeEndedGrants } from './store/grants.js';
import { purgeSessions } from './store/sessions.js';
import { purgeChallenges } from './store/factors.js';
import { purgeUserTokens } from './store/user-tokens.js';
import { purgePushedRequests } from './store/pushed-requests.js';
import { purgeDeviceCodes } from './store/device-codes.js';
import { removeStaleSignUps } from './model/lifecycle.js';
import { purgeRegistrationTokens } from './store/registrations.js';

export { accessTokenSource } from './access-token-source.js';

/**
 * Deletes what can no longer matter: tokens, codes and grants past their end, ended sessions,
 * closed throttle windows, expired WebAuthn challenges, mailed links long expired, sign-ups never verified. Kept an hour longer than needed so a late request still gets the right error.
 */
export async function sweepAuthorizationTables(ctx: AppContext, now = Date.now()): Promise<Record<string, number>> {
  const cutoff = now - 3_600_000;
  return {
    ...(await purgeEndedGrants(ctx.store, cutoff)),
    sessions: await purgeSessions(ctx.store, now),
    counters: await purgeLoginWindows(ctx, cutoff),
    webauthn_challenges: await purgeChallenges(ctx.store, now),
    device_codes: await purgeDeviceCodes(ctx.store, cutoff),
    // A mailed link a day past its expiry: "used or expired" is said the same either way.
    user_tokens: await purgeUserTokens(ctx.store, now - 86_400_000),
    unverified_signups: await removeStaleSignUps(ctx, now),
    registration_tokens: await purgeRegistrationTokens(ctx.store, cutoff),
    // Pushed authorization requests (RFC 9126) past their expiry, used or not.
    pushed_requests: await purgePushedRequests(ctx.store, cutoff),
  };
}
