import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { InvalidInput } from '../../contract/errors.js';
import { ApiError, InvalidClientMetadata, InvalidRedirectUri, InvalidRequest, InvalidToken, TooManyRequests, notFound } from '../../platform/http/errors.js';
import { parseJsonBody } from '../../platform/http/body-parsers.js';
import { setNoStore } from '../../platform/http/html/index.js';
import { routeMethods } from '../../platform/http/routes.js';
import { audit } from '../audit.js';
import { formAttempt } from '../login-throttle.js';
import {
  REGISTRATIONS_PER_IP_HOUR,
  REGISTRATION_BODY_LIMIT,
  RegistrationTokenSpent,
  deleteRegistration,
  isCurrentSecret,
  describeRegistration,
  openRegistration,
  openRegistrationToken,
  readMetadata,
  registerDynamicClient,
  registrationPolicy,
  replaceRegistration,
} from '../model/registration.js';

// Dynamic client registration (RFC 7591) at {auth_url}/register and its management (RFC 7592) at
// {auth_url}/register/{client_id} (docs/oauth.md, Registering clients). Thin: the model
// (model/registration.ts) reads the metadata and applies the client rules; here are the HTTP
// steps — the policy (auth.registration), the throttle per IP, the Bearer tokens, the JSON body —
// and the one mapping of the model's InvalidInput to the RFC's errors.

/** The model's field names where RFC 7591 has others. */
const METADATA_NAMES: Record<string, string> = { name: 'client_name', uri: 'client_uri' };

/** The model's refusal as RFC 7591 §3.2.2 says it: invalid_redirect_uri for a redirect URI, else invalid_client_metadata. */
export function metadataError(e: InvalidInput): ApiError {
  const [field, message] = Object.entries(e.detail)[0] ?? ['metadata', e.message];
  const name = METADATA_NAMES[field] ?? field;
  const description = `${name}: ${message}`;
  return name === 'redirect_uris' ? new InvalidRedirectUri(description, { [name]: message }) : new InvalidClientMetadata(description, { [name]: message });
}

async function asMetadataError<T>(work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (e instanceof InvalidInput) throw metadataError(e);
    throw e;
  }
}

/** The token of `Authorization: Bearer <token>`, or undefined. */
function bearerToken(request: FastifyRequest): string | undefined {
  const m = /^Bearer +([\x21-\x7E]+) *$/i.exec(request.headers.authorization ?? '');
  return m?.[1];
}

/** The request's JSON object (RFC 7591 §3.1: `application/json`); anything else is an invalid_request, nothing read from it. */
function metadataBody(request: FastifyRequest): Record<string, unknown> {
  const type = (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json') throw new InvalidRequest('The client metadata must be sent as a JSON object (Content-Type: application/json)', { 'content-type': 'must be application/json' });
  let body: unknown;
  try {
    body = parseJsonBody(request.body as Buffer);
  } catch (e) {
    throw new InvalidRequest('The request body is not valid JSON', e instanceof ApiError ? e.detail : { body: 'is not valid JSON' });
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new InvalidRequest('The client metadata must be a JSON object', { body: 'must be an object' });
  return body as Record<string, unknown>;
}

export function registrationUri(ctx: AppContext, clientId: string): string {
  return `${ctx.config.authUrl}/register/${encodeURIComponent(clientId)}`;
}

/** POST {auth_url}/register (RFC 7591 §3). */
function register(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    setNoStore(reply);
    const policy = registrationPolicy(ctx);
    // Not offered: the endpoint is absent from the metadata, and answers as an unknown address.
    if (policy === 'closed') throw notFound('Dynamic client registration is not offered by this gatehouse', { registration: 'closed (auth.registration)' });
    const attempt = await formAttempt(ctx, `register:ip:${request.ip}`, REGISTRATIONS_PER_IP_HOUR);
    if ('retryAfter' in attempt) {
      audit(ctx, request.log, 'registration.refused', { ip: request.ip, reason: 'throttled' });
      throw new TooManyRequests(attempt.retryAfter, `Too many client registrations from this address (at most ${REGISTRATIONS_PER_IP_HOUR} an hour); retry later`, { ip: 'too many registrations' });
    }
    try {
      return await registerOnce(ctx, request, reply, policy);
    } catch (e) {
      // Refused for its metadata or body: nothing was made, so it does not count (a refused token does).
      if (e instanceof ApiError && e.status === 400) await attempt.giveBack();
      throw e;
    }
  };
}

/** The steps of a registration after the policy and the throttle. */
async function registerOnce(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, policy: 'token' | 'open') {
  let token = null;
  if (policy === 'token') {
    const presented = bearerToken(request);
    if (!presented) throw new InvalidToken('An initial access token is required (Authorization: Bearer <token>)', { authorization: 'is missing' });
    token = await openRegistrationToken(ctx, presented);
    if (!token) {
      audit(ctx, request.log, 'registration.refused', { ip: request.ip, reason: 'initial access token not valid' });
      throw new InvalidToken('The initial access token is not valid (unknown, expired, used up or revoked)', { authorization: 'is not a valid initial access token' });
    }
  }
  const metadata = await asMetadataError(() => readMetadata(metadataBody(request)));
  let registered;
  try {
    registered = await asMetadataError(() => registerDynamicClient(ctx, metadata, token));
  } catch (e) {
    if (e instanceof RegistrationTokenSpent) throw new InvalidToken('The initial access token is not valid (unknown, expired, used up or revoked)', { authorization: 'is not a valid initial access token' });
    throw e;
  }
  const { client, secret, registrationAccessToken } = registered;
  audit(ctx, request.log, 'client.registered', { client_id: client.id, ip: request.ip, actor: token ? `registration-token:${token.id}` : 'registration', ...(token ? { registration_token_id: token.id } : {}) });
  const uri = registrationUri(ctx, client.id);
  return reply
    .code(201)
    .header('location', uri)
    .type('application/json; charset=utf-8')
    .send({
      ...registered.metadata,
      ...(secret !== null ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
      registration_access_token: registrationAccessToken,
      registration_client_uri: uri,
    });
}

/** The registration the request's Bearer token manages (RFC 7592 §2: anything else is a 401). */
async function managed(ctx: AppContext, request: FastifyRequest) {
  if (registrationPolicy(ctx) === 'closed') throw notFound('Dynamic client registration is not offered by this gatehouse', { registration: 'closed (auth.registration)' });
  const { id } = request.params as { id: string };
  const token = bearerToken(request);
  if (!token) throw new InvalidToken('The registration access token is required (Authorization: Bearer <token>)', { authorization: 'is missing' });
  const found = await openRegistration(ctx, id, token);
  if (!found) throw new InvalidToken('The registration access token is not valid for this client', { authorization: 'is not the registration access token of this client' });
  return { ...found, token };
}

function manage(ctx: AppContext) {
  const answer = (reply: FastifyReply, metadata: Record<string, unknown>, clientId: string, token: string) =>
    reply
      .code(200)
      .type('application/json; charset=utf-8')
      // The registration access token the client presented is still its own (RFC 7592 §3 requires it in the answer); the secret is not kept.
      .send({ ...metadata, registration_access_token: token, registration_client_uri: registrationUri(ctx, clientId) });
  return {
    GET: async (request: FastifyRequest, reply: FastifyReply) => {
      setNoStore(reply);
      const { client, registration, token } = await managed(ctx, request);
      return answer(reply, describeRegistration(client, registration), client.id, token);
    },
    PUT: async (request: FastifyRequest, reply: FastifyReply) => {
      setNoStore(reply);
      const current = await managed(ctx, request);
      const body = metadataBody(request);
      if (body.client_id !== current.client.id) throw new InvalidClientMetadata('client_id: must be the id of the client being replaced', { client_id: `must be ${current.client.id}` });
      if (body.client_secret !== undefined && !isCurrentSecret(current.client, body.client_secret))
        throw new InvalidClientMetadata('client_secret: must be the current secret or omitted: a registration cannot change it', { client_secret: 'is not the current secret' });
      const replaced = await asMetadataError(async () => replaceRegistration(ctx, current, readMetadata(body, current.client.grantTypes)));
      if (!replaced) throw new InvalidToken('The registration access token is not valid for this client', { authorization: 'is not the registration access token of this client' });
      audit(ctx, request.log, 'client.registration_changed', { client_id: current.client.id, ip: request.ip });
      return answer(reply, replaced, current.client.id, current.token);
    },
    DELETE: async (request: FastifyRequest, reply: FastifyReply) => {
      setNoStore(reply);
      const { client } = await managed(ctx, request);
      await deleteRegistration(ctx, client.id);
      audit(ctx, request.log, 'client.registration_deleted', { client_id: client.id, ip: request.ip });
      return reply.code(204).send();
    },
  };
}

/**
 * The routes, in a scope of their own: the body is read raw (any content type) so that a
 * registration that is not JSON is an RFC error of this endpoint, not a 415.
 */
export async function registerRegistrationEndpoints(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    const base = ctx.config.auth.path;
    // Client metadata is small: a bigger body is 413 before it is read (docs/oauth.md, the bounds).
    routeMethods(scope, `${base}/register`, { POST: register(ctx) }, { bodyLimit: REGISTRATION_BODY_LIMIT });
    routeMethods(scope, `${base}/register/:id`, manage(ctx), { bodyLimit: REGISTRATION_BODY_LIMIT });
  });
}
