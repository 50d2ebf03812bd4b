import type { FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { AppContext } from '../contract/context.js';
import type { Caller } from '../contract/caller.js';
import { modelProblem } from '../contract/errors.js';
import { ApiError, notFound } from '../platform/http/errors.js';
import type { OperationSchema } from '../platform/http/openapi.js';
import { findUserById, findUserByUsername, type User } from '../authserver/model/users.js';

// What the admin API's route modules share (api.ts registers them, invitations.ts …): the model's
// errors as answers, a user by id or name, the actor of a change, an operation's schema.

export const ADMIN_API = '/admin/v1';

declare module 'fastify' {
  interface FastifyRequest {
    /** The admin API's caller, once its token is verified and holds the admin scope. */
    admin: Caller | null;
  }
}

/** The model's errors as HTTP answers: a broken rule 400 naming the field, a duplicate 409 (naming `duplicate`), too many 429. */
export async function model<T>(fn: () => Promise<T>, duplicate = 'id'): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    const problem = modelProblem(e, duplicate);
    if (!problem) throw e;
    throw new ApiError(problem.status, problem.message, problem.detail);
  }
}

/** A user by id, or by username (both are unique; ids are tried first). */
export async function userByKey(ctx: AppContext, key: string): Promise<User> {
  const user = (await findUserById(ctx, key)) ?? (await findUserByUsername(ctx, key));
  if (!user) throw notFound('No such user', { user: 'does not exist' });
  return user;
}

/** Who made a change through the admin API: the admin's subject (an event's `actor`). */
export const actorOf = (request: FastifyRequest): string => request.admin!.subject;

/** An operation's route schema: its parts (schemas.ts) and what the OpenAPI document says of it. */
export const op = (schema: OperationSchema): FastifySchema => schema;

/** A 201 with the new item's URL. */
export type Created = (reply: FastifyReply, path: string, value: unknown) => FastifyReply;
