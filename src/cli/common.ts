import type { Command } from 'commander';
import { ConfigError, loadConfig, type Config, type Role } from '../config/load.js';
import { closeContext, openContext } from '../server.js';
import type { AppContext } from '../context.js';

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

export function configFrom(opts: CommonOptions & { port?: number; host?: string; role?: Role }): Config {
  return loadConfig({ file: opts.config, dataDir: opts.dataDir, port: opts.port, host: opts.host, role: opts.role });
}

/** Runs a command body with an open context, closing it afterwards whatever happens. */
export async function withContext<T>(opts: CommonOptions, fn: (ctx: AppContext) => Promise<T>): Promise<T> {
  const ctx = await openContext(configFrom(opts));
  try {
    return await fn(ctx);
  } finally {
    await closeContext(ctx);
  }
}

/** A failure the user can act on: printed as one line, exit status 1 (2 for a bad config). */
export class CliError extends Error {}

export function reportAndExit(err: unknown): never {
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
