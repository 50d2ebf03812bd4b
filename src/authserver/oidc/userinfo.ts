import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { contextCache } from '../../contract/context-cache.js';
import { TokenVerifier } from '../../contract/active-token.js';
import { InsufficientScope, InvalidDpopProof, InvalidRequest, InvalidToken, TokenMissing } from '../../platform/http/errors.js';
import { boundRequestProblem } from '../../contract/dpop.js';
import { setNoStore } from '../../platform/http/html/index.js';
import { findUserById } from '../model/users.js';
import { bodyParams } from '../params.js';
import { OPENID_SCOPE, userClaims } from './claims.js';

// {auth_url}/userinfo (OpenID Connect Core §5.3): GET or POST, the access token in the
// Authorization header (Bearer) or, for a POST, in the form body (RFC 6750 §2.2) — one of the two.
// A DPoP-bound token comes as `Authorization: DPoP <token>` with its proof (RFC 9449 §7).
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
    let dpop = false;
    if (header !== undefined) {
      const m = /^(Bearer|DPoP) +([\x21-\x7E]+) *$/i.exec(header);
      if (!m) throw new InvalidRequest('The Authorization header must be "Bearer <access token>" or "DPoP <access token>"', { authorization: 'is not a Bearer or DPoP token' });
      dpop = m[1].toLowerCase() === 'dpop';
      token = m[2];
    }
    if (token === undefined) throw new TokenMissing('An access token is required (Authorization: Bearer <access token>)', { authorization: 'is missing' });
    const caller = await tokens().verify(token);
    if (!caller || caller.tokenType === 'mac') throw new InvalidToken('The access token is unknown, expired or revoked', { access_token: 'is not active' }, dpop ? 'DPoP' : 'Bearer');
    if (caller.tokenType === 'dpop' && !dpop) throw new InvalidToken('The access token is DPoP-bound: use the DPoP scheme with a proof', { authorization: 'must use the DPoP scheme' }, 'DPoP');
    if (caller.tokenType !== 'dpop' && dpop) throw new InvalidToken('The access token is not DPoP-bound: use the Bearer scheme', { authorization: 'must use the Bearer scheme' }, 'DPoP');
    if (dpop) {
      const problem = await boundRequestProblem(ctx, request, token, caller.jkt!, `${ctx.config.authUrl}/userinfo`);
      if (problem) throw new InvalidDpopProof(`Invalid DPoP proof: ${problem}`, { dpop: problem }, 401);
    }
    if (!caller.scopes.has(OPENID_SCOPE)) throw new InsufficientScope('The access token was not granted the openid scope', { scope: 'needs openid' });
    const user = caller.subject.startsWith('user:') ? await findUserById(ctx, caller.subject.slice('user:'.length)) : null;
    if (!user) throw new InvalidToken('The access token does not stand for a user any more', { access_token: 'its user was removed' });
    return reply.type('application/json; charset=utf-8').send({ sub: caller.subject, ...userClaims(user, caller.scopes) });
  };
}
