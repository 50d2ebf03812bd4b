import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GRANT_TYPES } from '../../platform/config/schema.js';
import { parseUrlEncoded } from '../params.js';
import { GRANTS, RESPONSE_TYPES, TOKEN_GRANTS } from './registry.js';

// The grant registry against the one list of grant names (GRANT_TYPES, which `auth.grants`, the
// admin schemas and the CLI read), and TokenGrant.parameters as what a grant may read.

test('the registry lists exactly the grant names of GRANT_TYPES, in the same order', () => {
  assert.deepEqual(
    GRANTS.map((g) => g.grantType),
    [...GRANT_TYPES],
  );
});

test('each grant is served at the token endpoint under its name, or started at /authorize by its response type', () => {
  for (const g of GRANTS) {
    if ('handler' in g) assert.equal(TOKEN_GRANTS.get(g.grantType), g, g.grantType);
    else assert.ok(g.responseType !== undefined && !TOKEN_GRANTS.has(g.grantType), g.grantType);
  }
  assert.equal(TOKEN_GRANTS.size, GRANTS.filter((g) => 'handler' in g).length);
  // RFC 6749 §4.2: the implicit grant has no token request; §3.1.1: its response type is `token`.
  assert.equal(TOKEN_GRANTS.has('implicit'), false);
  assert.deepEqual(new Map(RESPONSE_TYPES), new Map([['code', 'authorization_code'], ['token', 'implicit']]));
});

test('a grant reads only its declared parameters; others sent are ignored, not refused (RFC 6749 §3.2)', () => {
  const params = parseUrlEncoded('grant_type=password&username=ann&password=pw&unknown=1&client_id=app');
  params.restrictTo(TOKEN_GRANTS.get('password')!.parameters);
  assert.equal(params.require('username'), 'ann');
  assert.equal(params.get('scope'), undefined);
  assert.throws(() => params.get('unknown'), /Parameter unknown is read but not declared/);
  assert.throws(() => params.has('client_id'), /not declared/);
});
