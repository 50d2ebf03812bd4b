import { readFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { ConfigSchema, RATE_LIMIT_DEFAULTS, type RawConfig, type CollectionConfig } from './schema.js';
import { SERVER_FIELDS, isSystemSortField } from './record-fields.js';
import { describeSchemaErrors } from './schema-errors.js';
import { FIELD_TYPES_TEXT, FieldTypeError, scalarFieldType } from './field-types.js';

export type Role = 'all' | 'auth' | 'resource';

export interface Config extends RawConfig {
  /** The file the config came from (null for the built-in demo when none is found). */
  file: string;
  dataDir: string;
  role: Role;
  /** Absolute https URL without a trailing slash; may carry a path. */
  publicUrl: string;
  /** The path part of publicUrl ('' or '/api'): every route is served under it. */
  basePath: string;
  /** {auth_url}: where the authorization server answers. */
  authUrl: string;
  /** True when this process serves the authorization endpoints itself. */
  servesAuth: boolean;
  servesResources: boolean;
  /** Load tuning from the environment (docs/configuration.md): GATEHOUSE_MAX_EVENT_LOOP_DELAY, GATEHOUSE_TURN_BUDGET_MS, GATEHOUSE_PG_POOL. */
  load: {
    /** Event-loop delay, and wait for a turn, above which requests are 503 overloaded (ms; 0: no limit). */
    maxEventLoopDelayMs: number;
    /** Request work per turn of the event loop before further requests wait (ms; 0: off). */
    turnBudgetMs: number;
    /** Connections in this process's PostgreSQL pool; null: the store's default (unused with SQLite). */
    pgPool: number | null;
  };
  /** GATEHOUSE_SECRET_KEY: the key sealed secrets are stored under (platform/crypto/sealed.ts); null: `<data dir>/secret.key`. */
  secretKey: string | null;
}

export interface ConfigOverrides {
  file?: string;
  dataDir?: string;
  port?: number;
  host?: string;
  role?: Role;
  metricsPort?: number;
  env?: NodeJS.ProcessEnv;
}

export class ConfigError extends Error {
  constructor(
    readonly file: string,
    readonly field: string,
    readonly problem: string,
  ) {
    super(`invalid config ${file}: ${field ? `${field}: ` : ''}${problem}`);
    this.name = 'ConfigError';
  }
}

const RESERVED_COLLECTIONS = new Set(['jobs', 'openapi', 'health', 'oauth', 'docs', 'events']);

export const DEMO_CONFIG = fileURLToPath(new URL('../../../examples/zoo/gatehouse.yaml', import.meta.url));

/** Which config file to read: --config, else ./gatehouse.yaml, else the demo deployment. */
export function resolveConfigFile(file?: string): string {
  if (file) return path.resolve(file);
  const local = path.resolve('gatehouse.yaml');
  return existsSync(local) ? local : DEMO_CONFIG;
}

// verbose: the errors carry the data and schemas describeSchemaErrors turns into one sentence.
// validateSchema off: ConfigSchema is ours (schema.ts, its tests), and checking it against the
// meta-schema compiled that too in every process (schemaChecker below still does, for the config's).
const ajv = new Ajv({ useDefaults: true, allErrors: false, strict: false, verbose: true, validateSchema: false });
const validateShape = ajv.compile(ConfigSchema);
// Each collection's schema is compiled once to prove it valid: one instance for them all (a new
// Ajv per collection compiled the meta-schema again each time), which keeps none of them.
const schemaChecker = new Ajv({ strict: false, addUsedSchema: false });

// `yaml` (about a hundred modules) is loaded when a YAML file is read: a JSON config never needs it,
// and each CLI command and server start paid for it.
const yaml = () => createRequire(import.meta.url)('yaml') as typeof import('yaml');

export function parseConfigText(text: string, file: string): unknown {
  try {
    return file.endsWith('.json') ? JSON.parse(text) : yaml().parse(text);
  } catch (e) {
    throw new ConfigError(file, '', `cannot parse: ${(e as Error).message.split('\n')[0]}`);
  }
}

export function loadConfig(overrides: ConfigOverrides = {}): Config {
  const file = resolveConfigFile(overrides.file);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(file, '', `cannot read the file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  return resolveConfig(parseConfigText(text, file), file, overrides);
}

/** Validates a parsed config and applies flag > environment > file > default precedence. */
export function resolveConfig(raw: unknown, file: string, overrides: ConfigOverrides = {}): Config {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(file, '', 'must be a mapping');
  const data = structuredClone(raw) as Record<string, unknown>;
  const databaseWasSet = typeof (data.storage as Record<string, unknown> | undefined)?.database === 'string';
  const api = data.api as Record<string, unknown> | undefined;
  if (api && typeof api.rateLimit === 'object' && api.rateLimit !== null && !Array.isArray(api.rateLimit))
    api.rateLimit = { ...RATE_LIMIT_DEFAULTS, ...api.rateLimit };
  if (!validateShape(data)) {
    const { field, problem } = describeSchemaErrors(validateShape.errors!);
    throw new ConfigError(file, field, problem);
  }
  const cfg = data as unknown as RawConfig;
  const env = overrides.env ?? process.env;

  const dataDir = path.resolve(overrides.dataDir ?? env.GATEHOUSE_DATA_DIR ?? './data');
  if (env.HOST) cfg.server.host = env.HOST;
  if (env.PORT !== undefined && env.PORT !== '') {
    const port = Number(env.PORT);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError('environment', 'PORT', 'must be a port number');
    cfg.server.port = port;
  }
  if (overrides.host) cfg.server.host = overrides.host;
  if (overrides.port !== undefined) cfg.server.port = overrides.port;
  if (env.METRICS_PORT !== undefined && env.METRICS_PORT !== '') {
    const port = Number(env.METRICS_PORT);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new ConfigError('environment', 'METRICS_PORT', 'must be a port number (1-65535)');
    cfg.metrics.port = port;
  }
  if (overrides.metricsPort !== undefined) cfg.metrics.port = overrides.metricsPort;
  const load = {
    maxEventLoopDelayMs: millisecondsFromEnv(env, 'GATEHOUSE_MAX_EVENT_LOOP_DELAY', 1000),
    turnBudgetMs: millisecondsFromEnv(env, 'GATEHOUSE_TURN_BUDGET_MS', 20),
    pgPool: poolSizeFromEnv(env, 'GATEHOUSE_PG_POOL'),
  };
  if (env.DATABASE_URL) cfg.storage.database = env.DATABASE_URL;
  else if (!databaseWasSet) cfg.storage.database = `sqlite:${path.join(dataDir, 'gatehouse.db')}`;
  if (env.REDIS_URL) cfg.storage.redis = env.REDIS_URL;
  if (env.GATEHOUSE_SMTP_URL) {
    if (!/^smtps?:\/\//.test(env.GATEHOUSE_SMTP_URL)) throw new ConfigError('environment', 'GATEHOUSE_SMTP_URL', 'must be an smtp:// or smtps:// URL');
    cfg.email.smtp = env.GATEHOUSE_SMTP_URL;
  }

  checkStorage(cfg, file);
  checkApi(cfg, file);
  checkCollections(cfg.collections, file);

  const role = overrides.role ?? 'all';
  const publicUrl = (cfg.server.publicUrl ?? `https://${hostForUrl(cfg.server.host)}:${cfg.server.port}`).replace(/\/+$/, '');
  let basePath: string;
  try {
    basePath = new URL(publicUrl).pathname.replace(/\/+$/, '');
  } catch {
    throw new ConfigError(file, 'server.publicUrl', 'must be an absolute https URL');
  }
  if (role === 'resource' && !cfg.auth.url)
    throw new ConfigError(file, 'auth.url', 'is required with --role resource (the URL of the authorization server)');
  const servesAuth = role !== 'resource' && !cfg.auth.url;
  const authUrl = (cfg.auth.url ?? publicUrl + cfg.auth.path).replace(/\/+$/, '');

  return {
    ...cfg,
    file,
    dataDir,
    secretKey: env.GATEHOUSE_SECRET_KEY || null,
    role,
    publicUrl,
    basePath,
    authUrl,
    servesAuth: role === 'auth' || servesAuth,
    servesResources: role !== 'auth',
    load,
  };
}

/** A number from the environment that `valid` accepts (else a config error saying `must`); unset or empty: null. */
function numberFromEnv(env: NodeJS.ProcessEnv, name: string, valid: (n: number) => boolean, must: string): number | null {
  const text = env[name];
  if (text === undefined || text === '') return null;
  const n = Number(text);
  if (!valid(n)) throw new ConfigError('environment', name, must);
  return n;
}

const millisecondsFromEnv = (env: NodeJS.ProcessEnv, name: string, fallback: number): number =>
  numberFromEnv(env, name, (ms) => Number.isFinite(ms) && ms >= 0, 'must be a number of milliseconds (0 or more)') ?? fallback;

/** Null: the store's default. */
const poolSizeFromEnv = (env: NodeJS.ProcessEnv, name: string): number | null =>
  numberFromEnv(env, name, (size) => Number.isInteger(size) && size >= 1 && size <= 1000, 'must be a whole number of connections (1-1000)');

/** After listening on port 0 the real port is known: derive the URLs again. */
export function withListeningPort(cfg: Config, port: number): Config {
  if (cfg.server.publicUrl || cfg.server.port !== 0) return cfg;
  const publicUrl = `https://${hostForUrl(cfg.server.host)}:${port}`;
  return { ...cfg, publicUrl, authUrl: cfg.auth.url ?? publicUrl + cfg.auth.path };
}

function hostForUrl(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

function checkStorage(cfg: RawConfig, file: string): void {
  const db = cfg.storage.database;
  if (!/^sqlite:/.test(db) && !/^postgres(ql)?:\/\//.test(db))
    throw new ConfigError(file, 'storage.database', 'must start with sqlite: or postgres://');
  if (cfg.storage.redis && !/^rediss?:\/\//.test(cfg.storage.redis))
    throw new ConfigError(file, 'storage.redis', 'must start with redis:// or rediss://');
}

function checkApi(cfg: RawConfig, file: string): void {
  if (cfg.api.defaultLimit > cfg.api.maxLimit) throw new ConfigError(file, 'api.defaultLimit', 'must not exceed api.maxLimit');
  if (cfg.api.retiredVersions.includes(cfg.api.version))
    throw new ConfigError(file, 'api.retiredVersions', `must not contain the current version ${cfg.api.version}`);
  // OpenAPI 3.1: a license names its SPDX identifier or its URL, not both.
  if (cfg.api.license?.identifier !== undefined && cfg.api.license.url !== undefined) throw new ConfigError(file, 'api.license', 'takes identifier or url, not both');
}

/** A filter or sort field must have a scalar type (field-types.ts); the error names the field and says which types can be. */
function checkScalarField(file: string, at: string, field: string, property: unknown, use: 'filtered' | 'sorted'): void {
  try {
    scalarFieldType(property);
  } catch (e) {
    if (!(e instanceof FieldTypeError)) throw e;
    throw new ConfigError(file, at, `"${field}" cannot be ${use}: it ${e.problem}; only ${FIELD_TYPES_TEXT} can be ${use}`);
  }
}

/** A collection's declared migrations name its fields as the config now declares them (docs/configuration.md, Changing the schema). */
function checkMigrations(c: CollectionConfig, at: string, file: string): void {
  const props = c.schema.properties as Record<string, Record<string, unknown>>;
  const renamed = new Set<string>();
  const rename = (from: unknown, to: string, where: string) => {
    if (typeof from !== 'string' || !/^[a-z][a-z0-9_]*$/.test(from)) throw new ConfigError(file, where, 'must be the field\'s earlier name: lower case letters, digits and _');
    if (props[from]) throw new ConfigError(file, where, `"${from}" is still a property of the schema: a field renamed from it cannot keep it`);
    if (from === to) throw new ConfigError(file, where, 'names the field itself');
    if (renamed.has(from)) throw new ConfigError(file, where, `"${from}" is renamed twice`);
    renamed.add(from);
  };
  for (const [field, p] of Object.entries(props)) if (p.renamedFrom !== undefined) rename(p.renamedFrom, field, `${at}.schema.properties.${field}.renamedFrom`);
  c.migrations.forEach((step, i) => {
    const where = `${at}.migrations[${i}]`;
    const declared = (field: string, key: string) => {
      if (!props[field]) throw new ConfigError(file, `${where}.${key}`, `"${field}" is not a property of the collection's schema`);
      return props[field];
    };
    if ('rename' in step) {
      declared(step.rename.to, 'rename.to');
      rename(step.rename.from, step.rename.to, `${where}.rename.from`);
    } else if ('convert' in step) {
      const p = declared(step.convert.field, 'convert.field');
      if (step.convert.onError === 'default' && p.default === undefined)
        throw new ConfigError(file, `${where}.convert.onError`, `"default" takes the field's schema default, and "${step.convert.field}" declares none`);
      if (step.convert.onError === 'null') {
        const check = schemaChecker.compile(p);
        try {
          if (!check(null)) throw new ConfigError(file, `${where}.convert.onError`, `"null" needs a field that may be null, and "${step.convert.field}" may not (declare its type as [T, "null"], or use default)`);
        } finally {
          schemaChecker.removeSchema(p);
        }
      }
    } else if ('default' in step) {
      const p = declared(step.default.field, 'default.field');
      const check = schemaChecker.compile(p);
      try {
        if (!check(step.default.value)) throw new ConfigError(file, `${where}.default.value`, `is not a valid "${step.default.field}": ${schemaChecker.errorsText(check.errors)}`);
      } finally {
        schemaChecker.removeSchema(p);
      }
    } else if (props[step.drop]) {
      throw new ConfigError(file, `${where}.drop`, `"${step.drop}" is still a property of the schema: remove it from the schema to drop its values`);
    }
  });
}

function checkCollections(collections: Record<string, CollectionConfig>, file: string): void {
  for (const [name, c] of Object.entries(collections)) {
    const at = `collections.${name}`;
    if (!/^[a-z][a-z0-9_]*$/.test(name))
      throw new ConfigError(file, at, 'a collection name must be lower case (letters, digits and _, starting with a letter)');
    if (RESERVED_COLLECTIONS.has(name)) throw new ConfigError(file, at, `"${name}" is reserved`);
    const props = c.schema.properties;
    for (const f of Object.keys(props)) {
      if ((SERVER_FIELDS as readonly string[]).includes(f)) throw new ConfigError(file, `${at}.schema.properties.${f}`, 'is a server-owned field');
      if (!/^[a-z][a-z0-9_]*$/.test(f))
        throw new ConfigError(file, `${at}.schema.properties.${f}`, 'a field name must be lower case letters, digits and _');
    }
    if (c.parent) {
      const parent = collections[c.parent.collection];
      if (!parent) throw new ConfigError(file, `${at}.parent.collection`, `no collection named "${c.parent.collection}"`);
      if (parent.parent) throw new ConfigError(file, `${at}.parent.collection`, 'only one level of nesting is allowed');
      if (c.parent.collection === name) throw new ConfigError(file, `${at}.parent.collection`, 'a collection cannot be its own parent');
      if (props[c.parent.field]) throw new ConfigError(file, `${at}.parent.field`, 'must not also be a property of the schema');
      if (collections[c.parent.field] || c.parent.field === 'attachments')
        throw new ConfigError(file, `${at}.parent.field`, 'clashes with a collection name');
      if (c.access && parent.access && c.access !== parent.access)
        throw new ConfigError(file, `${at}.access`, 'a child collection inherits its access from its parent');
    }
    const parentField = c.parent?.field;
    c.filters.forEach((f, i) => {
      const p = props[f];
      if (f === parentField) return;
      if (!p) throw new ConfigError(file, `${at}.filters[${i}]`, `"${f}" is not a property of the collection's schema`);
      checkScalarField(file, `${at}.filters[${i}]`, f, p, 'filtered');
    });
    c.sort.forEach((f, i) => {
      if (isSystemSortField(f)) return;
      const p = props[f];
      if (!p) throw new ConfigError(file, `${at}.sort[${i}]`, `"${f}" is not a property of the collection's schema`);
      checkScalarField(file, `${at}.sort[${i}]`, f, p, 'sorted');
    });
    c.search.forEach((f, i) => {
      const p = props[f];
      if (!p) throw new ConfigError(file, `${at}.search[${i}]`, `"${f}" is not a property of the collection's schema`);
      let type;
      try {
        type = scalarFieldType(p).type;
      } catch {
        type = null;
      }
      if (type !== 'string') throw new ConfigError(file, `${at}.search[${i}]`, `"${f}" cannot be searched: only string properties can`);
    });
    const indexable = new Set([...c.filters, ...c.sort, ...(parentField ? [parentField] : [])]);
    c.indexes.forEach((fields, i) => {
      fields.forEach((f, j) => {
        if (!indexable.has(f) || f === 'id')
          throw new ConfigError(file, `${at}.indexes[${i}][${j}]`, `"${f}" cannot be indexed: list it in filters or sort first (id ends every index)`);
        if (fields.indexOf(f) !== j) throw new ConfigError(file, `${at}.indexes[${i}][${j}]`, `"${f}" is named twice in this index`);
      });
    });
    checkMigrations(c, `${at}`, file);
    try {
      schemaChecker.compile(c.schema);
    } catch (e) {
      throw new ConfigError(file, `${at}.schema`, `is not a valid JSON Schema: ${(e as Error).message}`);
    } finally {
      schemaChecker.removeSchema(c.schema);
    }
  }
  // /<collection>/<id>/attachments is the attachment route: no child collection may take that name.
  const attachmentsChild = collections.attachments?.parent;
  if (attachmentsChild && collections[attachmentsChild.collection]?.attachments)
    throw new ConfigError(file, 'collections.attachments.parent', 'clashes with the attachments of its parent');
}
