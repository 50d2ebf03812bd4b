import type { AppContext } from '../../contract/context.js';
import { accessTokenKey, sha256 } from '../../platform/crypto/secrets.js';
import { InvalidClient } from '../../platform/http/errors.js';
import { authenticateClient } from './client-auth.js';
import { oauthEndpoint } from './oauth-endpoint.js';
import { activeFrom, matchingToken } from '../../contract/active-token.js';
import { findGrant } from '../tokens.js';
import { findAccessTokenWithGrant, findRefreshTokenRow } from '../store/grants.js';
import { findUserById } from '../model/users.js';
import { mayIntrospect, type Client } from '../model/clients.js';
import { issuerOf } from '../issuer.js';
import { resourceUrl } from '../../contract/resources.js';

// POST {auth_url}/introspection (RFC 7662), for confidential clients. A client learns only about
// the tokens issued to itself; a client registered as a resource server (--introspect) about every
// token (model: mayIntrospect). Anything else — unknown, ended, another client's — is
// { active: false }, the same answer, so that it tells nothing about other clients' tokens.

const INACTIVE = { active: false } as const;

export function introspectionEndpoint(ctx: AppContext) {
  return oauthEndpoint(async (request, params) => {
    const { client } = await authenticateClient(ctx, request, params);
    if (client.public)
      throw new InvalidClient('Introspection needs a confidential client', { client_id: 'must be a confidential client' });
    const token = params.require('token');
    const hint = params.get('token_type_hint');
    const kinds = hint === 'refresh_token' ? [refresh, access] : [access, refresh];
    let result: Record<string, unknown> | null = null;
    for (const kind of kinds) if ((result = await kind(token, client))) break;
    return result ?? INACTIVE;
  });

  async function access(presented: string, caller: Client): Promise<Record<string, unknown> | null> {
    const key = accessTokenKey(presented);
    const row = matchingToken(await findAccessTokenWithGrant(ctx.store, key.id), key);
    if (!row) return null;
    if (!mayIntrospect(caller, row.client_id)) return INACTIVE;
    const token = activeFrom(row);
    if (!token || (await ctx.accessTokens.clientOrigins(token.clientId)) === null) return INACTIVE;
    const described = await describe(token.subject, token.clientId, [...token.scopes].join(' '), token.issuedAt, token.expiresAt, token.jkt ? 'DPoP' : token.tokenType);
    // RFC 8707: the resource the token is for (RFC 7662 §2.2 `aud`); RFC 9449 §6.2: the key a DPoP-bound token is bound to.
    const withAudience = { ...described, aud: resourceUrl(ctx.config, token.audience) };
    return token.jkt ? { ...withAudience, cnf: { jkt: token.jkt } } : withAudience;
  }

  async function refresh(presented: string, caller: Client): Promise<Record<string, unknown> | null> {
    const hash = sha256(presented);
    const row = await findRefreshTokenRow(ctx.store, hash);
    if (!row) return null;
    if (!mayIntrospect(caller, row.client_id)) return INACTIVE;
    const grant = await findGrant(ctx, row.grant_id);
    const now = Date.now();
    if (row.used_at !== null || Number(row.expires_at) <= now || !grant || grant.revokedAt !== null || grant.expiresAt <= now)
      return INACTIVE;
    const described = await describe(grant.subject, row.client_id, row.scope, Number(row.created_at), Number(row.expires_at), 'refresh_token');
    return row.jkt ? { ...described, cnf: { jkt: row.jkt } } : described;
  }

  async function describe(subject: string, clientId: string, scope: string, iat: number, exp: number, tokenType: string) {
    const out: Record<string, unknown> = {
      active: true,
      scope,
      client_id: clientId,
      token_type: tokenType,
      exp: Math.floor(exp / 1000),
      iat: Math.floor(iat / 1000),
      sub: subject,
      iss: issuerOf(ctx.config),
    };
    if (subject.startsWith('user:')) {
      const user = await findUserById(ctx, subject.slice(5));
      if (user) out.username = user.username;
    }
    return out;
  }
}
