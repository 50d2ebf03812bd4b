import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveConfig, ConfigError } from './load.js';

const minimal = { collections: { zoos: { schema: { type: 'object', properties: { name: { type: 'string' } } } } } };

test('api.rateLimit: absent gets the defaults, a partial object is completed, null switches it off', () => {
  const env = {};
  assert.deepEqual(resolveConfig(structuredClone(minimal), 'g.yaml', { env }).api.rateLimit, { max: 1000, window: 60 });
  assert.deepEqual(resolveConfig({ ...structuredClone(minimal), api: { rateLimit: { max: 5 } } }, 'g.yaml', { env }).api.rateLimit, { max: 5, window: 60 });
  assert.equal(resolveConfig({ ...structuredClone(minimal), api: { rateLimit: null } }, 'g.yaml', { env }).api.rateLimit, null);
  assert.throws(
    () => resolveConfig({ ...structuredClone(minimal), api: { rateLimit: { max: 0 } } }, 'g.yaml', { env }),
    (e: unknown) => e instanceof ConfigError && e.field === 'api.rateLimit.max',
  );
});

test('flag > environment > file > default for port, host and database', () => {
  const file = { ...structuredClone(minimal), server: { port: 9000, host: '127.0.0.2' } };
  const fromFile = resolveConfig(structuredClone(file), 'g.yaml', { env: {} });
  assert.equal(fromFile.server.port, 9000);
  const fromEnv = resolveConfig(structuredClone(file), 'g.yaml', { env: { PORT: '9100', DATABASE_URL: 'postgres://x@h/db' } });
  assert.equal(fromEnv.server.port, 9100);
  assert.equal(fromEnv.storage.database, 'postgres://x@h/db');
  const fromFlag = resolveConfig(structuredClone(file), 'g.yaml', { env: { PORT: '9100' }, port: 9200, host: '::1' });
  assert.equal(fromFlag.server.port, 9200);
  assert.equal(fromFlag.publicUrl, 'https://[::1]:9200');
});

test('the overload limits come from the environment: defaults, empty means the default, 0 is allowed, anything else is a config error', () => {
  const load = (env: Record<string, string>) => resolveConfig(structuredClone(minimal), 'g.yaml', { env }).load;
  assert.deepEqual(load({}), { maxEventLoopDelayMs: 1000, turnBudgetMs: 20, pgPool: null });
  assert.deepEqual(load({ GATEHOUSE_MAX_EVENT_LOOP_DELAY: '', GATEHOUSE_TURN_BUDGET_MS: '' }), { maxEventLoopDelayMs: 1000, turnBudgetMs: 20, pgPool: null });
  assert.deepEqual(load({ GATEHOUSE_MAX_EVENT_LOOP_DELAY: '250', GATEHOUSE_TURN_BUDGET_MS: '0' }), { maxEventLoopDelayMs: 250, turnBudgetMs: 0, pgPool: null });
  for (const [name, value] of [['GATEHOUSE_TURN_BUDGET_MS', 'abc'], ['GATEHOUSE_TURN_BUDGET_MS', '-1'], ['GATEHOUSE_MAX_EVENT_LOOP_DELAY', '1s']])
    assert.throws(
      () => load({ [name]: value }),
      (e: unknown) => e instanceof ConfigError && e.file === 'environment' && e.field === name && /milliseconds/.test(e.message),
    );
});

test('the PostgreSQL pool size comes from the environment: a whole number from 1; empty means the default; 0, fractions and words are config errors', () => {
  const pool = (value: string) => resolveConfig(structuredClone(minimal), 'g.yaml', { env: { GATEHOUSE_PG_POOL: value } }).load.pgPool;
  assert.equal(pool('4'), 4);
  assert.equal(pool(''), null);
  for (const value of ['0', '-2', '2.5', 'ten', '100000'])
    assert.throws(
      () => pool(value),
      (e: unknown) => e instanceof ConfigError && e.file === 'environment' && e.field === 'GATEHOUSE_PG_POOL' && /whole number of connections/.test(e.message),
      `GATEHOUSE_PG_POOL=${value}`,
    );
});

test('api.license: a name with an identifier or a url, not both; unknown keys refused', () => {
  const env = {};
  const withLicense = (license: unknown) => resolveConfig({ ...structuredClone(minimal), api: { license } }, 'g.yaml', { env });
  assert.deepEqual(withLicense({ name: 'CC0 1.0', identifier: 'CC0-1.0' }).api.license, { name: 'CC0 1.0', identifier: 'CC0-1.0' });
  assert.deepEqual(withLicense({ name: 'Ours', url: 'https://example.com/terms' }).api.license, { name: 'Ours', url: 'https://example.com/terms' });
  assert.equal(resolveConfig(structuredClone(minimal), 'g.yaml', { env }).api.license, undefined);
  const refused = (license: unknown, field: string) =>
    assert.throws(() => withLicense(license), (e: unknown) => e instanceof ConfigError && e.field === field, JSON.stringify(license));
  refused({ name: 'X', identifier: 'MIT', url: 'https://example.com' }, 'api.license');
  refused({ identifier: 'MIT' }, 'api.license.name');
  refused({ name: 'X', spdx: 'MIT' }, 'api.license.spdx');
});

test('migrations: each step names fields as the schema now declares them; a wrong step is a config error naming it', () => {
  const env = {};
  const zoos = (properties: Record<string, unknown>, migrations: unknown[], extra: Record<string, unknown> = {}) =>
    resolveConfig({ collections: { zoos: { schema: { type: 'object', properties }, migrations, ...extra } } }, 'g.yaml', { env });
  const accepted = zoos({ town: { type: 'string', renamedFrom: 'city' }, founded: { type: 'integer', default: 0 } }, [
    { convert: { field: 'founded', to: 'integer', onError: 'default' } },
    { default: { field: 'founded', value: 1900 } },
    { drop: 'region' },
  ]);
  assert.equal(accepted.collections.zoos.migrations.length, 3);
  const refused = (properties: Record<string, unknown>, migrations: unknown[], field: string, message: RegExp) =>
    assert.throws(
      () => zoos(properties, migrations),
      (e: unknown) => e instanceof ConfigError && e.field === field && message.test(e.message),
      `${JSON.stringify(migrations)} → ${field}`,
    );
  const name = { name: { type: 'string' } };
  refused({ ...name, town: { type: 'string', renamedFrom: 'name' } }, [], 'collections.zoos.schema.properties.town.renamedFrom', /"name" is still a property/);
  refused({ ...name, town: { type: 'string', renamedFrom: 'City' } }, [], 'collections.zoos.schema.properties.town.renamedFrom', /earlier name/);
  refused(name, [{ rename: { from: 'city', to: 'town' } }], 'collections.zoos.migrations[0].rename.to', /"town" is not a property/);
  refused({ ...name, town: { type: 'string', renamedFrom: 'city' } }, [{ rename: { from: 'city', to: 'name' } }], 'collections.zoos.migrations[0].rename.from', /"city" is renamed twice/);
  refused(name, [{ convert: { field: 'name', to: 'text' } }], 'collections.zoos.migrations[0].convert.to', /must be/);
  refused(name, [{ convert: { field: 'name', to: 'string', onError: 'default' } }], 'collections.zoos.migrations[0].convert.onError', /declares none/);
  refused(name, [{ convert: { field: 'name', to: 'string', onError: 'null' } }], 'collections.zoos.migrations[0].convert.onError', /may not \(declare its type as \[T, "null"\]/);
  zoos({ name: { type: ['string', 'null'] } }, [{ convert: { field: 'name', to: 'string', onError: 'null' } }]);
  refused(name, [{ default: { field: 'name', value: 5 } }], 'collections.zoos.migrations[0].default.value', /is not a valid "name"/);
  refused(name, [{ drop: 'name' }], 'collections.zoos.migrations[0].drop', /still a property/);
  refused(name, [{ rename: { from: 'a', to: 'name' }, drop: 'b' }], 'collections.zoos.migrations[0]', /must be one of \{rename/);
});
