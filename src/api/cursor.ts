import type { KeyRing } from '../platform/crypto/keys.js';
import { constantTimeEqual } from '../platform/crypto/secrets.js';
import { badRequest } from '../platform/http/errors.js';
import type { SortKey } from './store/list-plans.js';

// `after=` and `before=` cursors (keyset paging): a position in the sort order — a row's sort
// keys' values and its id (the last row of a page for `next`, the first for `prev`) — for one
// collection and one sort, signed with the server's key (HMAC) so that a cursor cannot be forged
// or altered. Opaque to clients; a garbage, altered or foreign cursor is a 400 naming the
// parameter it came in.

const MAX_CURSOR = 4096;

function sortSpec(sort: SortKey[]): string {
  return sort.map((k) => `${k.field}:${k.order}`).join(',');
}

const invalidIn = (parameter: string, why: string) => badRequest('Invalid cursor', { [parameter]: why });

export async function encodeCursor(keys: KeyRing, collection: string, sort: SortKey[], values: unknown[]): Promise<string> {
  const payload = Buffer.from(JSON.stringify({ c: collection, s: sortSpec(sort), v: values })).toString('base64url');
  return `${payload}.${await keys.sign(payload)}`;
}

/** The keyset values of a cursor made for this collection and sort; a 400 for anything else. */
export async function decodeCursor(
  keys: KeyRing,
  collection: string,
  sort: SortKey[],
  cursor: string,
  count: number,
  parameter: 'after' | 'before' = 'after',
): Promise<unknown[]> {
  const invalid = (why: string) => invalidIn(parameter, why);
  if (cursor.length > MAX_CURSOR) throw invalid('is not a cursor of this API');
  const parts = cursor.split('.');
  if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]+$/.test(p))) throw invalid('is not a cursor of this API');
  const [payload, keyId, mac] = parts;
  const expected = await keys.macWith(keyId, payload);
  if (expected === null || !constantTimeEqual(expected, mac)) throw invalid('is not a cursor of this API (altered or forged)');
  let body: { c?: unknown; s?: unknown; v?: unknown };
  try {
    body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw invalid('is not a cursor of this API');
  }
  if (body.c !== collection) throw invalid(`was made for another collection`);
  if (body.s !== sortSpec(sort)) throw invalid('was made for another sort order: keep sortby and order as they were');
  const values = body.v;
  if (!Array.isArray(values) || values.length !== count || !values.every((v) => v === null || typeof v === 'string' || typeof v === 'number'))
    throw invalid('is not a cursor of this API');
  return values;
}
