import type { Config } from '../platform/config/load.js';
import type { AppContext } from '../contract/context.js';
import { describeDatabase, openStore } from '../platform/store/open-store.js';
import { isGatehouseDatabase, migrateCore } from '../platform/store/migrations.js';
import { NoDatabase } from '../platform/store/store.js';
import { buildCollections } from '../contract/collections.js';
import { KeyRing } from '../platform/crypto/keys.js';
import { Sealer } from '../platform/crypto/sealed.js';
import { adoptSchema, syncResourceTables } from '../api/lifecycle.js';
import { accessTokenSource } from '../authserver/lifecycle.js';
import { ownedRecordsIn } from '../api/owned-records.js';

export interface OpenOptions {
  /**
   * Only a database gatehouse has made (the CLI's commands but serve and migrate): where there is
   * none, NoDatabase, and nothing is created.
   */
  existing?: boolean;
  /**
   * `serve` of the resource API: the collections' stored records against the config, before any
   * table is touched (api/schema-evolution.ts). Safe changes are taken and their lines pushed
   * here; any other change throws SchemaChangesRefused.
   */
  adoptSchema?: string[];
  /**
   * Bring the collections' tables in line with the config (default true). Off for what never
   * reads records (the CLI's commands but serve and migrate, `serve --role auth`): a config
   * changed ahead of `gatehouse migrate` must not rebuild a column from documents not yet migrated.
   */
  resourceTables?: boolean;
}

/** Opens the stores and brings the database up to date: what every command needs. */
export async function openContext(config: Config, options: OpenOptions = {}): Promise<AppContext> {
  const store = await openStore(config.storage.database, { pgPool: config.load.pgPool, existing: options.existing });
  try {
    if (options.existing && !(await isGatehouseDatabase(store))) throw new NoDatabase(describeDatabase(config.storage.database));
    const collections = buildCollections(config.collections);
    await store.withMigrationLock(async () => {
      await migrateCore(store);
      if (options.adoptSchema) options.adoptSchema.push(...(await adoptSchema(store, collections)));
      if (options.resourceTables !== false) await syncResourceTables(store, collections);
    });
    // Loaded only when configured: a single-instance deployment never pays for the client's code.
    const redis = config.storage.redis
      ? new (await import('ioredis')).Redis(config.storage.redis, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false })
      : null;
    if (redis) redis.on('error', () => undefined); // reported by /health; ioredis reconnects by itself
    const keys = new KeyRing(store);
    await keys.refresh();
    return { config: freeze(config), store, redis, collections, keys, sealer: new Sealer(config.secretKey, config.dataDir, store), accessTokens: accessTokenSource(store, config.auth.clientMetadataDocuments), ownedRecords: ownedRecordsIn(store, collections, config) };
  } catch (e) {
    await store.close();
    throw e;
  }
}

/** The config is settled before anything is built from it; freezing makes a late change fail loudly. */
function freeze(config: Config): Config {
  for (const section of Object.values(config)) if (section && typeof section === 'object' && !Array.isArray(section)) Object.freeze(section);
  return Object.freeze(config);
}

export async function closeContext(ctx: AppContext): Promise<void> {
  await ctx.store.close();
  if (ctx.redis) await ctx.redis.quit().catch(() => ctx.redis?.disconnect());
}
