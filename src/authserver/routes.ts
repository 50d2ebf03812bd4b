import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../contract/context.js';
import { routeMethods } from '../platform/http/routes.js';
import { authorizeGet, authorizePost } from './authorize/authorize.js';
import { accountGet, accountPost } from './account/account.js';
import { introspectionEndpoint } from './endpoints/introspection.js';
import { METADATA_PATH, metadataEndpoint } from './endpoints/metadata.js';
import { registerOAuthBodyParsers } from './params.js';
import { revocationEndpoint } from './endpoints/revocation.js';
import { tokenEndpoint } from './endpoints/token.js';

/** The authorization server (docs/oauth.md) under {auth_url}, and its metadata. */
export async function registerAuthorizationServer(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await app.register(async (oauth) => {
    registerOAuthBodyParsers(oauth);
    const base = ctx.config.auth.path;
    routeMethods(oauth, `${base}/authorize`, { GET: authorizeGet(ctx), POST: authorizePost(ctx) }, { config: { html: true } });
    routeMethods(oauth, `${base}/account`, { GET: accountGet(ctx), POST: accountPost(ctx) }, { config: { html: true } });
    routeMethods(oauth, `${base}/token`, { POST: tokenEndpoint(ctx) });
    routeMethods(oauth, `${base}/revocation`, { POST: revocationEndpoint(ctx) });
    routeMethods(oauth, `${base}/introspection`, { POST: introspectionEndpoint(ctx) });
    routeMethods(oauth, METADATA_PATH, { GET: metadataEndpoint(ctx) });
    // Tokens are opaque (hashed in the database), so nothing is signed: the key set is empty.
    routeMethods(oauth, `${base}/jwks`, { GET: async (_request, reply) => reply.header('cache-control', 'public, max-age=300').send({ keys: [] }) });

  });
}
