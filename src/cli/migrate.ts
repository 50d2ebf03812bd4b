import type { Command } from 'commander';
import { openStore } from '../platform/store/open-store.js';
import { migrateCore } from '../platform/store/migrations.js';
import { syncResourceTables } from '../api/lifecycle.js';
import { buildCollections } from '../contract/collections.js';
import { configFrom, withCommonOptions, type CommonOptions } from './common.js';

export function migrateCommand(program: Command): void {
  withCommonOptions(program.command('migrate'))
    .description("bring the database up to date with this version and the config's collections")
    .action(async (opts: CommonOptions) => {
      const config = configFrom(opts);
      const store = await openStore(config.storage.database, { pgPool: config.load.pgPool });
      try {
        const { applied, report } = await store.withMigrationLock(async () => ({
          applied: await migrateCore(store),
          report: await syncResourceTables(store, buildCollections(config.collections)),
        }));
        console.log(JSON.stringify({ migrations_applied: applied, collections_created: report.created, columns_added: report.columnsAdded, search_indexed: report.searchIndexed }, null, 2));
      } finally {
        await store.close();
      }
    });
}
