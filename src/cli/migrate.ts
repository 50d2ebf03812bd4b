import type { Command } from 'commander';
import { openStore } from '../store/dialect.js';
import { migrateCore } from '../store/migrations.js';
import { syncCollectionTables } from '../store/collections.js';
import { buildCollections } from '../resources/model.js';
import { configFrom, withCommonOptions, type CommonOptions } from './common.js';

export function migrateCommand(program: Command): void {
  withCommonOptions(program.command('migrate'))
    .description("bring the database up to date with this version and the config's collections")
    .action(async (opts: CommonOptions) => {
      const config = configFrom(opts);
      const store = await openStore(config.storage.database);
      try {
        const { applied, report } = await store.withMigrationLock(async () => ({
          applied: await migrateCore(store),
          report: await syncCollectionTables(store, buildCollections(config.collections)),
        }));
        console.log(JSON.stringify({ migrations_applied: applied, collections_created: report.created, columns_added: report.columnsAdded }, null, 2));
      } finally {
        await store.close();
      }
    });
}
