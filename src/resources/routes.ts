import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';

export async function registerResourceApi(_app: FastifyInstance, _ctx: AppContext): Promise<void> {}
