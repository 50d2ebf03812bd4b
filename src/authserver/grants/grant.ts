import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import type { GrantType } from '../model/clients.js';
import type { AuthenticatedClient } from '../endpoints/client-auth.js';
import type { Params } from '../params.js';
import type { TokenResponse } from '../tokens.js';
import type { Client } from '../model/client.js';
import { findUserById } from '../model/users.js';
import { withAdminRule } from '../scope-request.js';
import { ADMIN_SCOPE } from '../../contract/scope-name.js';

/**
 * The shape every grant module of the token endpoint exports, listed in registry.ts: the token
 * endpoint dispatches on `grantType`.
 */
export interface TokenGrant {
  grantType: Exclude<GrantType, 'implicit'>;
  /**
   * The parameters this grant reads, besides grant_type and client authentication: the only ones
   * `params` answers in `handler` (reading another throws; a parameter sent and not read is ignored,
   * RFC 6749 §3.2).
   */
  parameters: readonly string[];
  /** The response_type that starts it at the authorization endpoint, if any (RFC 6749 §3.1.1). */
  responseType?: 'code';
  handler(ctx: AppContext, request: FastifyRequest, caller: AuthenticatedClient, params: Params): Promise<TokenResponse>;
}

/**
 * A scope about to be granted again from an earlier decision (a code, a refresh token), under the
 * admin rule as it stands now: the client's registration and the user's admin right may have
 * changed since. The user is read only when `admin` is at stake.
 */
export async function withAdminRuleNow(ctx: AppContext, scope: string[], client: Client, subject: string, via: 'authorization_code' | 'refresh_token' | 'urn:ietf:params:oauth:grant-type:device_code'): Promise<string[]> {
  if (!scope.includes(ADMIN_SCOPE)) return scope;
  const userId = subject.startsWith('user:') ? subject.slice('user:'.length) : null;
  const user = userId === null ? null : await findUserById(ctx, userId);
  return withAdminRule(scope, client, { user: { admin: user?.admin === true }, via });
}
