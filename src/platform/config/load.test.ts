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
