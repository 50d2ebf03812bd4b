import type { Command } from 'commander';
import { SealedSecretError } from '../platform/crypto/sealed.js';
import { ConfigError, loadConfig, type Config, type Role } from '../platform/config/load.js';
import { closeContext, openContext } from '../main/context.js';
import { describeDatabase } from '../platform/store/open-store.js';
import { NoDatabase } from '../platform/store/store.js';
import { MigrationRefused, SchemaChangesRefused } from '../api/schema-refusals.js';
import type { AppContext } from '../contract/context.js';
import { modelProblem } from '../contract/errors.js';

export interface CommonOptions {
  config?: string;
  dataDir?: string;
}

/** Every subcommand takes --config and --data-dir. */
export function withCommonOptions(cmd: Command): Command {
  return cmd
    .option('--config <file>', 'config file (default ./gatehouse.yaml, else the demo deployment)')
    .option('--data-dir <dir>', 'data directory (default ./data)');
}

export function configFrom(opts: CommonOptions & { port?: number; host?: string; role?: Role; metricsPort?: number }): Config {
  return loadConfig({ file: opts.config, dataDir: opts.dataDir, port: opts.port, host: opts.host, role: opts.role, metricsPort: opts.metricsPort });
}

/**
 * Runs a command body with an open context, closing it afterwards whatever happens. Only on a
 * database gatehouse has made: these commands never create one (NoDatabase, exit 2). On a
 * terminal the database used is named on stderr.
 */
export async function withContext<T>(opts: CommonOptions, fn: (ctx: AppContext) => Promise<T>): Promise<T> {
  const config = configFrom(opts);
  const ctx = await openContext(config, { existing: true, resourceTables: false });
  if (process.stderr.isTTY) process.stderr.write(`gatehouse: database ${describeDatabase(config.storage.database)}\n`);
  try {
    return await fn(ctx);
  } finally {
    await closeContext(ctx);
  }
}

/** A failure the user can act on: printed as one line, exit status 1 (2 for a bad config). */
export class CliError extends Error {}

/**
 * Runs a model call, turning its rule errors into CliErrors that name the command-line flag
 * (`flags` maps a field such as grant_types to --grant).
 */
export async function modelErrors<T>(flags: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    const problem = modelProblem(e);
    if (!problem) throw e;
    if (!problem.byField) throw new CliError(problem.message);
    // A broken rule: its first field, named as the flag that sets it.
    const [field, message] = Object.entries(problem.detail)[0] ?? ['', problem.message];
    throw new CliError(flags[field] ? `${flags[field]}: ${message}` : message);
  }
}

export function reportAndExit(err: unknown): never {
  if (err instanceof NoDatabase) {
    process.stderr.write(
      `gatehouse: ${err.message}: nothing was done, and no database was created.\n` +
        `Run the command where gatehouse serves, or point it there with --data-dir DIR or --config FILE (storage.database);\n` +
        `\`gatehouse migrate\` (or \`gatehouse serve\`) creates a new database.\n`,
    );
    process.exit(2);
  }
  if (err instanceof SchemaChangesRefused) {
    process.stderr.write(`gatehouse: ${err.message}\nNo record and no collection table was changed. Declare the migrations (docs/configuration.md, Changing the schema), then run \`gatehouse migrate --dry-run\` and \`gatehouse migrate\`.\n`);
    process.exit(2);
  }
  if (err instanceof MigrationRefused) {
    process.stderr.write(`gatehouse: the migration cannot run:\n${err.lines.map((l) => `  ${l}\n`).join('')}`);
    process.exit(2);
  }
  if (err instanceof SealedSecretError) {
    process.stderr.write(`gatehouse: ${err.message}\n`);
    process.exit(2);
  }
  if (err instanceof ConfigError) {
    process.stderr.write(`gatehouse: ${err.message}\n`);
    process.exit(2);
  }
  if (err instanceof CliError) {
    process.stderr.write(`gatehouse: ${err.message}\n`);
    process.exit(1);
  }
  process.stderr.write(`gatehouse: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
}
