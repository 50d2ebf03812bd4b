import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import type { GrantType } from '../model/clients.js';
import type { AuthenticatedClient } from '../endpoints/client-auth.js';
import type { Params } from '../params.js';
import type { TokenResponse } from '../tokens.js';

/** The shape every grant module exports: the token endpoint dispatches on `grantType`. */
export interface TokenGrant {
  grantType: Exclude<GrantType, 'implicit'>;
  /** The parameters this grant reads, besides grant_type and client authentication. */
  parameters: readonly string[];
  handler(ctx: AppContext, request: FastifyRequest, caller: AuthenticatedClient, params: Params): Promise<TokenResponse>;
}
