import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, resolveConfig } from './load.js';
import { levenshtein, nearestKey } from './schema-errors.js';

const zoos = () => ({ schema: { type: 'object', properties: { name: { type: 'string' }, tags: { type: 'array' } } }, filters: ['name'] });
const minimal = () => ({ collections: { zoos: zoos() } as Record<string, unknown> });

/** The message of the ConfigError that resolving `mutate(minimal config)` throws. */
function messageOf(mutate: (c: Record<string, any>) => void): string {
  const c: Record<string, any> = minimal();
  mutate(c);
  try {
    resolveConfig(c, 'g.yaml', { env: {} });
  } catch (e) {
    assert.ok(e instanceof ConfigError, String(e));
    return e.message;
  }
  assert.fail('the config was accepted');
}

// Ajv's own phrases and syntax must never reach a person.
const RAW = /must have required property|must match a schema|must be equal to constant|must NOT|must match pattern|instancePath|#\/|\/properties\/|anyOf|additionalProperties|\n/;

const cases: [string, (c: Record<string, any>) => void, string][] = [
  ['misspelt key in a collection', (c) => (c.collections.zoos.filtres = ['name']), 'collections.zoos.filtres: unknown key; did you mean filters?'],
  ['case of a key', (c) => (c.auth = { accessTokenTTL: 60 }), 'auth.accessTokenTTL: unknown key; did you mean accessTokenTtl?'],
  ['top-level key', (c) => (c.colections = {}), 'colections: unknown key; did you mean collections?'],
  ['prefix of a key', (c) => (c.server = { trust: true }), 'server.trust: unknown key; did you mean trustProxy?'],
  ['nothing near', (c) => (c.storage = { elephant: 1 }), 'storage.elephant: unknown key; the keys here are database and redis'],
  ['integer given a string', (c) => (c.server = { port: 'abc' }), 'server.port: must be an integer, got "abc"'],
  ['integer given a fraction', (c) => (c.api = { maxLimit: 2.5 }), 'api.maxLimit: must be an integer, got 2.5'],
  ['boolean given a number', (c) => (c.server = { trustProxy: 1 }), 'server.trustProxy: must be a boolean (true or false), got 1'],
  ['list given a string', (c) => (c.collections.zoos.filters = 'name'), 'collections.zoos.filters: must be a list, got "name"'],
  ['mapping given a list', (c) => (c.auth = []), 'auth: must be a mapping, got a list'],
  ['union of constants', (c) => (c.collections.zoos.access = 'public'), 'collections.zoos.access: must be owner or shared, got "public"'],
  ['constant', (c) => (c.collections.zoos.schema.type = 'array'), 'collections.zoos.schema.type: must be object, got "array"'],
  ['union of types', (c) => (c.storage = { redis: 5 }), 'storage.redis: must be a string or null, got 5'],
  ['union: inside the object branch', (c) => (c.api = { rateLimit: { max: 0 } }), 'api.rateLimit.max: must be at least 1, got 0'],
  ['union: a mapping or null', (c) => (c.api = { rateLimit: 'lots' }), 'api.rateLimit: must be a mapping or null, got "lots"'],
  ['union: pattern in the string branch', (c) => (c.server = { publicUrl: 'http://x.example' }), 'server.publicUrl: must be an absolute https:// URL, got "http://x.example"'],
  ['pattern with a problem', (c) => (c.collections.zoos.attachments = { types: ['Image/PNG'] }), 'collections.zoos.attachments.types[0]: must be a media type in lower case, such as image/png, got "Image/PNG"'],
  ['required', (c) => delete c.collections.zoos.schema, 'collections.zoos.schema: is required'],
  ['required, nested', (c) => (c.collections.zoos.parent = { collection: 'x' }), 'collections.zoos.parent.field: is required'],
  ['maximum', (c) => (c.server = { port: 70000 }), 'server.port: must be at most 65535, got 70000'],
  ['minimum', (c) => (c.auth = { codeTtl: 0 }), 'auth.codeTtl: must be at least 1, got 0'],
  ['empty string', (c) => (c.server = { host: '' }), 'server.host: must not be empty'],
  ['empty list', (c) => (c.collections.zoos.attachments = { types: [] }), 'collections.zoos.attachments.types: must list at least 1 item'],
  ['no collections', (c) => (c.collections = {}), 'collections: must not be empty'],
];

for (const [name, mutate, expected] of cases) {
  test(`config error in one sentence: ${name}`, () => {
    const message = messageOf(mutate);
    assert.equal(message, `invalid config g.yaml: ${expected}`);
    assert.doesNotMatch(message, RAW);
  });
}

test('a filter on a type that cannot be filtered still says which types can', () => {
  const message = messageOf((c) => (c.collections.zoos.filters = ['tags']));
  assert.match(message, /^invalid config g\.yaml: collections\.zoos\.filters\[0\]: "tags" cannot be filtered: .* only .* can be filtered$/);
});

test('nearestKey: at most two edits (case aside) or a prefix of at least 3 characters', () => {
  const keys = ['codeTtl', 'accessTokenTtl', 'refreshTokenTtl', 'maxGrantTtl', 'sessionTtl', 'loginThrottle', 'demo', 'path', 'url'];
  assert.equal(nearestKey('accesTokenTtl', keys), 'accessTokenTtl');
  assert.equal(nearestKey('ACCESSTOKENTTL', keys), 'accessTokenTtl');
  assert.equal(nearestKey('login', keys), 'loginThrottle');
  assert.equal(nearestKey('sessionTtlSeconds', keys), 'sessionTtl');
  assert.equal(nearestKey('demos', keys), 'demo');
  assert.equal(nearestKey('zebra', keys), null);
  assert.equal(nearestKey('tsl', ['host', 'port', 'publicUrl', 'tls', 'trustProxy', 'bodyLimit']), 'tls');
  assert.equal(nearestKey('anything', []), null);
  assert.equal(levenshtein('kitten', 'sitting'), 3);
  assert.equal(levenshtein('', 'abc'), 3);
});
