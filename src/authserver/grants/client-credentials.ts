import { UnauthorizedClient } from '../../platform/http/errors.js';
import { CLIENT_ITSELF, resolveRequestedScope } from '../scope-request.js';
import { issueTokens } from '../tokens.js';
import { clientSubject } from '../model/users.js';
import type { TokenGrant } from './grant.js';
import { readTokenResource } from '../resource-request.js';

// RFC 6749 §4.4: a confidential client acting in its own name. Its subject is `client:<id>`;
// the token stands alone (no grant row, no refresh token): one insert per token, committed
// together with the other token requests of the same moment.

export const clientCredentialsGrant: TokenGrant = {
  grantType: 'client_credentials',
  parameters: ['scope', 'resource'],
  async handler(ctx, request, { client }, params) {
    if (client.public)
      throw new UnauthorizedClient('A public client cannot use client_credentials', {
        grant_type: 'needs a confidential client',
      });
    const scope = resolveRequestedScope(params.get('scope'), client, ctx.collections, CLIENT_ITSELF);
    // RFC 8707: any of the deployment's resources (no authorization request narrowed them); none named: the API.
    const audience = readTokenResource(ctx.config, params)?.path;
    const response = await issueTokens(ctx, request.log, {
      grantType: 'client_credentials',
      client,
      subject: clientSubject(client.id),
      grant: { none: true },
      scope,
      refreshScope: null,
      audience,
      grouped: true,
      audit: { event: 'grant.issued' },
    });
    return response!;
  },
};
