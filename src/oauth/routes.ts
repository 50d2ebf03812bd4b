import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';

/** The authorization server of SPEC.md under {auth_url}, and its metadata. */
export async function registerAuthorizationServer(_app: FastifyInstance, _ctx: AppContext): Promise<void> {}
