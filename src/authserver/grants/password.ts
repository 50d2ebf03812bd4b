import { InvalidGrant } from '../../platform/http/errors.js';
import { resolveRequestedScope } from '../scope-request.js';
import { checkSecondFactor, signIn, throttled } from '../login-throttle.js';
import { hasSecondFactor, mustHaveSecondFactor } from '../model/factors.js';
import { issueTokens, issuesRefreshTokens } from '../tokens.js';
import { userSubject } from '../model/users.js';
import type { TokenGrant } from './grant.js';
import { readTokenResource } from '../resource-request.js';

// RFC 6749 §4.3: only for clients registered with it. Failed attempts are throttled per user
// name and per IP, and so are second factors: a user who has one sends its code as `otp`. The grant lasts as long as its refresh token could (never past maxGrantTtl).


export const passwordGrant: TokenGrant = {
  grantType: 'password',
  parameters: ['username', 'password', 'scope', 'otp', 'resource'],
  async handler(ctx, request, { client }, params) {
    const username = params.require('username');
    const password = params.require('password');
    // Checked again once the user is known: `admin` only for admin users.
    const requested = params.get('scope');
    // RFC 8707: checked before the password is; the refresh token stays bound to it.
    const resource = readTokenResource(ctx.config, params);
    resolveRequestedScope(requested, client, ctx.collections, { user: null, via: 'password' });

    const outcome = await signIn(ctx, request.log, { username, password, ip: request.ip, clientId: client.id, via: 'password grant' });
    if ('retryAfter' in outcome) throw throttled(outcome.retryAfter);
    if ('failed' in outcome) throw new InvalidGrant('Invalid username or password', { password: 'does not match the username' });
    if ('unverified' in outcome) throw new InvalidGrant("The user's e-mail address is not verified yet: open the link mailed at sign-up", { username: 'e-mail address not verified' });
    if (await hasSecondFactor(ctx, outcome.user)) {
      const otp = params.get('otp');
      if (!otp) throw new InvalidGrant('This user signs in with a second factor: send the otp parameter (a code of the authenticator app, or a recovery code)', { otp: 'required for this user' });
      const second = await checkSecondFactor(ctx, request.log, { user: outcome.user, otp, ip: request.ip, clientId: client.id, via: 'password grant' });
      if ('retryAfter' in second) throw throttled(second.retryAfter);
      if ('failed' in second && second.locked)
        throw new InvalidGrant('Too many wrong authenticator codes in a row: send a recovery code as otp', { otp: 'authenticator codes refused until a recovery code is used' });
      if ('failed' in second) throw new InvalidGrant('Invalid otp: not a current code of the user\'s authenticator, or used already', { otp: 'not correct, or used already' });
    } else if (mustHaveSecondFactor(ctx, outcome.user)) {
      throw new InvalidGrant('This user must set up a second factor first (otp): sign in on the account page', { otp: 'no second factor set up' });
    }

    const scope = resolveRequestedScope(requested, client, ctx.collections, { user: outcome.user, via: 'password' });
    const { auth } = ctx.config;
    const refresh = issuesRefreshTokens(ctx, client);
    const validity = Math.min(auth.maxGrantTtl, refresh ? auth.refreshTokenTtl : auth.accessTokenTtl);
    const response = await issueTokens(ctx, request.log, {
      grantType: 'password',
      client,
      subject: userSubject(outcome.user.id),
      grant: { new: { scope, lifetimeSeconds: validity } },
      scope,
      refreshScope: refresh ? scope : null,
      audience: resource?.path,
      refreshResources: resource?.path ?? null,
      audit: { event: 'grant.issued' },
    });
    return response!;
  },
};
