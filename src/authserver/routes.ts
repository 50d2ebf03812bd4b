import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../contract/context.js';
import { routeMethods } from '../platform/http/routes.js';
import { authorizeGet, authorizePost } from './authorize/authorize.js';
import { accountGet, accountPost } from './account/account.js';
import { resetGet, resetPost, signUpGet, signUpPost, verifyGet, verifyPost } from './lifecycle/pages.js';
import { introspectionEndpoint } from './endpoints/introspection.js';
import { METADATA_PATH, OPENID_CONFIGURATION_PATH, metadataEndpoint, openidConfiguration } from './endpoints/metadata.js';
import { idTokenKeys } from './oidc/keys.js';
import { logoutEndpoint } from './oidc/logout.js';
import { userinfoEndpoint } from './oidc/userinfo.js';
import { registerOAuthBodyParsers } from './params.js';
import { revocationEndpoint } from './endpoints/revocation.js';
import { tokenEndpoint } from './endpoints/token.js';
import { registerRegistrationEndpoints } from './endpoints/registration.js';
import { PAR_BODY_LIMIT, parEndpoint } from './endpoints/par.js';
import { deviceAuthorizationEndpoint } from './endpoints/device-authorization.js';
import { deviceGet, devicePost } from './authorize/device.js';

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
    // Pushed authorization requests (RFC 9126; docs/oauth.md#pushed-authorization-requests).
    routeMethods(oauth, `${base}/par`, { POST: parEndpoint(ctx) }, { bodyLimit: PAR_BODY_LIMIT });
    // The device authorization grant (RFC 8628): the device's request, and the page where the user types its code.
    routeMethods(oauth, `${base}/device_authorization`, { POST: deviceAuthorizationEndpoint(ctx) });
    routeMethods(oauth, `${base}/device`, { GET: deviceGet(ctx), POST: devicePost(ctx) }, { config: { html: true } });
    routeMethods(oauth, METADATA_PATH, { GET: metadataEndpoint(ctx) });
    // OpenID Connect (docs/oauth.md, Sign in with gatehouse).
    routeMethods(oauth, OPENID_CONFIGURATION_PATH, { GET: metadataEndpoint(ctx, openidConfiguration) });
    // The public keys of the ID tokens (access tokens are opaque: nothing else is signed).
    routeMethods(oauth, `${base}/jwks`, {
      GET: async (_request, reply) =>
        reply
          .header('cache-control', 'public, max-age=300')
          .type('application/jwk-set+json; charset=utf-8')
          .send({ keys: await idTokenKeys(ctx).publicKeys() }),
    });
    const userinfo = userinfoEndpoint(ctx);
    routeMethods(oauth, `${base}/userinfo`, { GET: userinfo, POST: userinfo });
    routeMethods(oauth, `${base}/logout`, logoutEndpoint(ctx), { config: { html: true } });
    // The user's lifecycle by e-mail (docs/users.md).
    routeMethods(oauth, `${base}/signup`, { GET: signUpGet(ctx), POST: signUpPost(ctx) }, { config: { html: true } });
    routeMethods(oauth, `${base}/verify`, { GET: verifyGet(ctx), POST: verifyPost(ctx) }, { config: { html: true } });
    routeMethods(oauth, `${base}/reset`, { GET: resetGet(ctx), POST: resetPost(ctx) }, { config: { html: true } });
    // Dynamic client registration, RFC 7591/7592 (docs/oauth.md, Registering clients).
    await registerRegistrationEndpoints(oauth, ctx);

  });
}
