import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import type { AuthenticatedClient, GrantType } from '../clients.js';
import type { Params } from '../params.js';
import type { TokenResponse } from '../tokens.js';

/** The shape every grant module exports: the token endpoint dispatches on `grantType`. */
export interface TokenGrant {
  grantType: Exclude<GrantType, 'implicit'>;
  /** The parameters this grant reads, besides grant_type and client authentication. */
  parameters: readonly string[];
  handler(ctx: AppContext, request: FastifyRequest, caller: AuthenticatedClient, params: Params): Promise<TokenResponse>;
}
