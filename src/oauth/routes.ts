import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { routeMethods } from '../http/routes.js';
import { authorizeGet, authorizePost } from './authorize.js';
import { introspectionEndpoint } from './introspection.js';
import { METADATA_PATH, metadataEndpoint } from './metadata.js';
import { registerOAuthBodyParsers } from './params.js';
import { revocationEndpoint } from './revocation.js';
import { tokenEndpoint } from './token-endpoint.js';

/** The authorization server of SPEC.md under {auth_url}, and its metadata. */
export async function registerAuthorizationServer(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await app.register(async (oauth) => {
    registerOAuthBodyParsers(oauth);
    const base = ctx.config.auth.path;
    routeMethods(oauth, `${base}/authorize`, { GET: authorizeGet(ctx), POST: authorizePost(ctx) }, { config: { html: true } });
    routeMethods(oauth, `${base}/token`, { POST: tokenEndpoint(ctx) });
    routeMethods(oauth, `${base}/revocation`, { POST: revocationEndpoint(ctx) });
    routeMethods(oauth, `${base}/introspection`, { POST: introspectionEndpoint(ctx) });
    routeMethods(oauth, METADATA_PATH, { GET: metadataEndpoint(ctx) });
    // Tokens are opaque (hashed in the database), so nothing is signed: the key set is empty.
    routeMethods(oauth, `${base}/jwks`, { GET: async (_request, reply) => reply.header('cache-control', 'public, max-age=300').send({ keys: [] }) });

  });
}
