import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { contextCache } from '../../contract/context-cache.js';
import { TokenVerifier } from '../../contract/active-token.js';
import { InsufficientScope, InvalidRequest, InvalidToken, TokenMissing } from '../../platform/http/errors.js';
import { setNoStore } from '../../platform/http/html/index.js';
import { findUserById } from '../model/users.js';
import { bodyParams } from '../params.js';
import { OPENID_SCOPE, userClaims } from './claims.js';

// {auth_url}/userinfo (OpenID Connect Core §5.3): GET or POST, the access token in the
// Authorization header (Bearer) or, for a POST, in the form body (RFC 6750 §2.2) — one of the two.
// It answers `sub` and the claims of exactly the identity scopes the token holds.

export function userinfoEndpoint(ctx: AppContext) {
  const tokens = () => contextCache(ctx, 'userinfo-tokens', () => new TokenVerifier(ctx));
  return async (request: FastifyRequest, reply: FastifyReply) => {
    setNoStore(reply);
    const header = request.headers.authorization;
    // RFC 6750 §2.2: a token in the body only from a form body.
    const formBody = request.method === 'POST' && /^application\/x-www-form-urlencoded\b/i.test(request.headers['content-type'] ?? '');
    const inBody = formBody ? bodyParams(request).get('access_token') : undefined;
    if (header !== undefined && inBody !== undefined) throw new InvalidRequest('Send the access token one way only: the Authorization header or the body', { access_token: 'sent twice' });
    let token = inBody;
    if (header !== undefined) {
      const m = /^Bearer +([\x21-\x7E]+) *$/i.exec(header);
      if (!m) throw new InvalidRequest('The Authorization header must be "Bearer <access token>"', { authorization: 'is not a Bearer token' });
      token = m[1];
    }
    if (token === undefined) throw new TokenMissing('An access token is required (Authorization: Bearer <access token>)', { authorization: 'is missing' });
    const caller = await tokens().verify(token);
    if (!caller || caller.tokenType !== 'bearer') throw new InvalidToken('The access token is unknown, expired or revoked', { access_token: 'is not active' });
    if (!caller.scopes.has(OPENID_SCOPE)) throw new InsufficientScope('The access token was not granted the openid scope', { scope: 'needs openid' });
    const user = caller.subject.startsWith('user:') ? await findUserById(ctx, caller.subject.slice('user:'.length)) : null;
    if (!user) throw new InvalidToken('The access token does not stand for a user any more', { access_token: 'its user was removed' });
    return reply.type('application/json; charset=utf-8').send({ sub: caller.subject, ...userClaims(user, caller.scopes) });
  };
}
