import { InvalidArgumentError, type Command } from 'commander';
import { describeDatabase, openStore } from '../platform/store/open-store.js';
import { isGatehouseDatabase, migrateCore } from '../platform/store/migrations.js';
import { NoDatabase } from '../platform/store/store.js';
import { MIGRATION_BATCH, appliedMigrations, applySchemaPlan, assertPlanApplies, planSchemaChanges, syncResourceTables, type Progress, type SchemaPlan } from '../api/lifecycle.js';
import { buildCollections } from '../contract/collections.js';
import { configFrom, withCommonOptions, type CommonOptions } from './common.js';
import { MigrationRefused } from '../api/schema-refusals.js';
import { sqliteFileOf } from '../platform/store/backup.js';
import { serversOf } from '../platform/store/serving.js';

/** The plan as `migrate` prints it: the schema changes and the declared steps with their counts. */
function planJson(plan: SchemaPlan) {
  return {
    schema_changes: plan.changes.map((c) => ({ collection: c.collection, field: c.field, change: c.text, safe: c.safe, records: c.records, ...(c.safe ? {} : { fix: c.fix }) })),
    schema_migrations: plan.steps.map((s) => ({ collection: s.collection, migration: s.description, records: s.records, ...(s.failed ? { not_convertible: s.failed, examples: s.failures } : {}) })),
  };
}

function parseBatch(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 100_000) throw new InvalidArgumentError('must be a whole number from 1 to 100000');
  return n;
}

/** Progress on a terminal: one line rewritten in place; elsewhere a line every 10 s. */
function progressReporter(): (p: Progress) => void {
  let shownAt = Date.now();
  return ({ collection, done, total }) => {
    const text = `migrating ${collection}: ${done} of ${total} records (${total ? Math.floor((done * 100) / total) : 100}%)`;
    if (process.stderr.isTTY) process.stderr.write(`\r${text}${done === total ? '\n' : ''}`);
    else if (Date.now() - shownAt >= 10_000 || done === total) {
      shownAt = Date.now();
      process.stderr.write(`${text}\n`);
    }
  };
}

export function migrateCommand(program: Command): void {
  withCommonOptions(program.command('migrate'))
    .description("bring the database up to date with this version and the config's collections; apply the declared schema migrations")
    .option('--dry-run', 'print the plan (changes, migrations, record counts, values that do not convert) and change nothing')
    .option('--accept-access-change', "take a collection's changed access (owner ↔ shared): who may read its stored records changes")
    .option('--batch <n>', `records rewritten per transaction (default ${MIGRATION_BATCH})`, parseBatch, MIGRATION_BATCH)
    .action(async (opts: CommonOptions & { dryRun?: boolean; batch: number; acceptAccessChange?: boolean }) => {
      const config = configFrom(opts);
      const collections = buildCollections(config.collections);
      const store = await openStore(config.storage.database, { pgPool: config.load.pgPool, existing: opts.dryRun });
      try {
        if (opts.dryRun) {
          if (!(await isGatehouseDatabase(store))) throw new NoDatabase(describeDatabase(config.storage.database));
          const plan = await planSchemaChanges(store, collections);
          console.log(JSON.stringify({ dry_run: true, ...planJson(plan), schema_migrations_applied: await appliedMigrations(store) }, null, 2));
          try {
            assertPlanApplies(plan, opts.acceptAccessChange);
          } catch (e) {
            if (!(e instanceof MigrationRefused)) throw e;
            process.stderr.write(`gatehouse: \`gatehouse migrate\` would refuse:\n${e.lines.map((l) => `  ${l}\n`).join('')}`);
            process.exitCode = 2;
          }
          return;
        }
        const result = await store.withMigrationLock(async () => {
          const applied = await migrateCore(store);
          // Refused before any table changes: a refused migration leaves the database as it was.
          const plan = await planSchemaChanges(store, collections, { count: false });
          assertPlanApplies(plan, opts.acceptAccessChange);
          // On SQLite a running server would keep writing the old shape behind the scan: not while one serves.
          const file = sqliteFileOf(config.storage.database);
          const serving = file && plan.steps.some((s) => s.records !== 0) ? serversOf(file) : [];
          if (serving.length)
            throw new MigrationRefused([
              `gatehouse serve is running on this database (${serving.map((p) => `pid ${p.pid} on ${p.host}`).join(', ')}): stop it, run \`gatehouse migrate\`, then start it with the new config`,
            ]);
          const { records } = await applySchemaPlan(store, collections, plan, progressReporter(), opts.batch);
          const report = await syncResourceTables(store, collections);
          return { applied, report, plan, records, history: await appliedMigrations(store) };
        });
        const { applied, report, plan, records, history } = result;
        console.log(
          JSON.stringify(
            {
              migrations_applied: applied,
              collections_created: report.created,
              columns_added: report.columnsAdded,
              columns_rebuilt: report.columnsRebuilt,
              search_indexed: report.searchIndexed,
              ...planJson(plan),
              records_migrated: records,
              schema_migrations_applied: history,
            },
            null,
            2,
          ),
        );
      } finally {
        await store.close();
      }
    });
}
