import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import type { ResourceApi } from './routes.js';

export async function registerAttachmentRoutes(_api: FastifyInstance, _v: string, _ctx: AppContext, _a: ResourceApi): Promise<void> {}
