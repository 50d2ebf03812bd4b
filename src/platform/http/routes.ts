import type { FastifyInstance, FastifyRequest, RouteHandlerMethod, RouteShorthandOptions } from 'fastify';
import { methodNotAllowed } from './errors.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
/** A method's handler, or its handler with route options of its own (a schema, hooks). */
export type MethodRoute = RouteHandlerMethod | (RouteShorthandOptions & { handler: RouteHandlerMethod });
const ALL: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** Routes pass the same arrays of methods on every request: each is extended once. */
const withHeadOf = new WeakMap<readonly string[], readonly string[]>();

/** The methods a URL answers: GET brings HEAD with it. */
export function withHead(methods: readonly string[]): readonly string[] {
  let all = withHeadOf.get(methods);
  if (!all) withHeadOf.set(methods, (all = methods.includes('GET') ? ['GET', 'HEAD', ...methods.filter((m) => m !== 'GET')] : [...methods]));
  return all;
}

/**
 * Registers the handlers of one URL and answers every other method with 405 + Allow, so an
 * unsupported method is never mistaken for an unknown path. GET brings HEAD with it.
 */
export function routeMethods(
  app: FastifyInstance,
  url: string,
  handlers: Partial<Record<Method, MethodRoute>>,
  options: RouteShorthandOptions = {},
  /** Called instead of the plain 405 (the resource API answers with what the token may do). */
  unsupported?: (request: FastifyRequest, allow: readonly string[]) => Promise<void> | void,
): void {
  const methods = Object.keys(handlers) as Method[];
  for (const method of methods) {
    const route = handlers[method]!;
    app.route(typeof route === 'function' ? { ...options, method, url, handler: route } : { ...options, ...route, method, url });
  }
  const allow = withHead(methods);
  const others = ALL.filter((m) => !allow.includes(m));
  app.route({
    ...options,
    method: others,
    url,
    exposeHeadRoute: false,
    handler: async (request) => {
      if (unsupported) await unsupported(request, allow);
      throw methodNotAllowed(allow, 'Method not allowed on this URL', { method: `allowed: ${allow.join(', ')}` });
    },
  });
}
