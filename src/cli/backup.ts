import type { Command } from 'commander';
import { BackupRefused, backupSqlite, restoreSqlite, sqliteFileOf } from '../platform/store/backup.js';
import { CliError, configFrom, withCommonOptions, type CommonOptions } from './common.js';
import { redactPassword } from '../platform/store/open-store.js';

// gatehouse backup <file> / gatehouse restore <file>: SQLite through the store layer
// (src/platform/store/backup.ts); for PostgreSQL the commands say how to use pg_dump / pg_restore.

export function backupCommands(program: Command): void {
  withCommonOptions(program.command('backup <file>'))
    .description('write a consistent copy of the SQLite database to <file> while servers keep serving (PostgreSQL: explains pg_dump)')
    .action(async (file: string, opts: CommonOptions) => {
      const { storage } = configFrom(opts);
      const database = sqliteFileOf(storage.database);
      if (database === null) throw new CliError(pgDumpAdvice(storage.database, file));
      const result = await refusals(() =>
        backupSqlite(database, file, (p) => {
          if (p.restarted) process.stderr.write('backup: the database changed meanwhile: copying the rest in one step\n');
          else process.stderr.write(`backup: ${Math.floor((p.copiedPages * 100) / p.totalPages)}% (${p.copiedPages} of ${p.totalPages} pages)\n`);
        }),
      );
      console.log(JSON.stringify(result, null, 2));
    });

  withCommonOptions(program.command('restore <file>'))
    .description('replace the SQLite database with a backup (no server may be using it); the previous one is kept as <db>.before-restore-<time> (PostgreSQL: explains pg_restore)')
    .action(async (file: string, opts: CommonOptions) => {
      const { storage } = configFrom(opts);
      const database = sqliteFileOf(storage.database);
      if (database === null) throw new CliError(pgRestoreAdvice(storage.database, file));
      const result = await refusals(() => restoreSqlite(database, file));
      console.log(JSON.stringify(result, null, 2));
    });
}

async function refusals<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof BackupRefused) throw new CliError(e.message);
    throw e;
  }
}

function pgDumpAdvice(url: string, file: string): string {
  return [
    'the database is PostgreSQL: gatehouse backup copies SQLite databases only. Use pg_dump, which takes a consistent snapshot while the servers keep serving:',
    `  pg_dump --format=custom --file=${quote(file)} ${quote(redactPassword(url))}`,
    ...passwordNote(url),
    `Restore such a file with pg_restore (gatehouse restore ${quote(file)} shows the command).`,
  ].join('\n');
}

function pgRestoreAdvice(url: string, file: string): string {
  return [
    'the database is PostgreSQL: gatehouse restore restores SQLite backups only. Restore a pg_dump file with pg_restore while no server runs:',
    `  pg_restore --clean --if-exists --no-owner --dbname=${quote(redactPassword(url))} ${quote(file)}`,
    ...passwordNote(url),
    'Then start the servers (a dump of an older release is migrated at start).',
  ].join('\n');
}

function passwordNote(url: string): string[] {
  return redactPassword(url) === url ? [] : ['(the password is shown as ***: put it back, or give it with PGPASSWORD or ~/.pgpass)'];
}

/** A shell word (single quotes) when the text needs quoting. */
function quote(text: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
