import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../contract/context.js';
import { notFound } from '../platform/http/errors.js';
import { absentBodyIsEmpty } from '../platform/http/openapi.js';
import { routeMethods } from '../platform/http/routes.js';
import { audit } from '../authserver/audit.js';
import { createRegistrationToken, describeRegistrationToken, listRegistrationTokens, revokeRegistrationToken } from '../authserver/model/registration.js';
import { ADMIN_API, actorOf, model, op, type Created } from './api-kit.js';
import * as S from './schemas.js';

// The admin API's initial access tokens of dynamic client registration (docs/admin.md;
// auth.registration: token): make one (the token shown once), list the live ones, revoke one.
// The model (authserver/model/registration.ts) keeps only their hashes.

export function registerRegistrationTokenRoutes(admin: FastifyInstance, ctx: AppContext, created: Created, options: object): void {
  routeMethods(
    admin,
    `${ADMIN_API}/registration-tokens`,
    {
      GET: {
        schema: op({ operationId: 'admin_list_registration_tokens', summary: 'The initial access tokens still usable (uses left, not expired), newest first; never the tokens', response: S.answers({ 200: ['OK', Type.Array(S.RegistrationToken)] }, 401, 403) }),
        handler: async () => (await listRegistrationTokens(ctx)).map(describeRegistrationToken),
      },
      POST: {
        schema: op({
          operationId: 'admin_create_registration_token',
          summary: 'Make an initial access token for dynamic client registration (auth.registration: token); the token is in this answer only',
          body: S.NewRegistrationToken,
          response: S.answers({ 201: ['Created (Location: its URL, for DELETE)', S.NewRegistrationTokenAnswer] }, 400, 401, 403),
        }),
        preValidation: absentBodyIsEmpty,
        handler: async (request, reply) => {
          const b = request.body as S.NewRegistrationToken;
          const { token, registrationToken } = await model(() => createRegistrationToken(ctx, { ttl: b.ttl, uses: b.uses }, actorOf(request)));
          audit(ctx, request.log, 'registration_token.created', { actor: actorOf(request), registration_token_id: registrationToken.id, reason: 'admin API' });
          return created(reply, `/registration-tokens/${registrationToken.id}`, { ...describeRegistrationToken(registrationToken), token });
        },
      },
    },
    options,
  );
  routeMethods(
    admin,
    `${ADMIN_API}/registration-tokens/:id`,
    {
      DELETE: {
        schema: op({ operationId: 'admin_revoke_registration_token', summary: 'Revoke an initial access token: it registers no more clients (those it registered stay)', params: S.IdParam, response: S.answers({ 204: ['Done'] }, 401, 403, 404) }),
        handler: async (request, reply) => {
          const { id } = request.params as { id: string };
          if (!(await revokeRegistrationToken(ctx, id))) throw notFound('No such registration token', { id: 'does not exist, or was revoked' });
          audit(ctx, request.log, 'registration_token.revoked', { actor: actorOf(request), registration_token_id: id, reason: 'admin API' });
          return reply.code(204).send();
        },
      },
    },
    options,
  );
}
