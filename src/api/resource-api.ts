import type { FastifyRequest } from 'fastify';
import type { Caller } from '../contract/caller.js';
import type { Address, Records } from './records.js';
import type { Links } from './links.js';
import type { Jobs } from './jobs.js';

/** What the resource API's route modules share (built once in routes.ts). */
export interface ResourceApi {
  records: Records;
  links: Links;
  jobs: Jobs;
  /** Resolves the URL to a collection (404 otherwise) and applies the access rules for the method. */
  authorize(request: FastifyRequest, collection: string, offered: readonly string[]): Caller;
  address(request: FastifyRequest, offered: readonly string[]): { address: Address; caller: Caller };
}
