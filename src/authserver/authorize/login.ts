import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { audit } from '../audit.js';
import { signIn, throttled } from '../login-throttle.js';
import { userSubject } from '../model/users.js';
import type { Params } from '../params.js';
import { startSession } from '../sessions.js';
import { authorizePath, pageHeaders, renderLogin } from './pages.js';
import { afterSignIn, type AuthorizationRequest } from './request.js';
import { describeDuration } from './views.js';

// The login step of the authorization flow: the same throttled sign-in as the password grant.

export async function login(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, req: AuthorizationRequest, form: Params) {
  const username = form.get('username');
  const password = form.get('password');
  if (!username || !password) return renderLogin(ctx, request, reply, req, 400, 'Enter your username and password.', username);
  const outcome = await signIn(ctx, request.log, { username, password, ip: request.ip, clientId: req.client.id, via: 'login form' });
  if ('retryAfter' in outcome) {
    reply.header('retry-after', throttled(outcome.retryAfter).headers['retry-after']);
    return renderLogin(ctx, request, reply, req, 429, `Too many failed attempts. Try again in ${describeDuration(outcome.retryAfter)}.`, username);
  }
  if ('failed' in outcome) return renderLogin(ctx, request, reply, req, 401, 'The username or password is not correct.', username);
  const { user } = outcome;
  await startSession(ctx, request, reply, user.id);
  audit(ctx, request.log, 'login.succeeded', { client_id: req.client.id, subject: userSubject(user.id), ip: request.ip });
  pageHeaders(reply);
  // Post/redirect/get: the consent page is a plain GET of the original request (303: the resource
  // API answers no 3xx but 303, docs/api.md#status-codes), less what this sign-in has just met.
  const raw = afterSignIn(req.raw);
  return reply.redirect(`${authorizePath(ctx)}${raw ? `?${raw}` : ''}`, 303);
}
