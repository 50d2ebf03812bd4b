import type { Command } from 'commander';
import { rotateKeys } from '../platform/crypto/keys.js';
import { withCommonOptions, withContext, type CommonOptions } from './common.js';

export function keysCommand(program: Command): void {
  const keys = program.command('keys').description("manage the server's secret keys (CSRF tokens, mac_key derivation)");
  withCommonOptions(keys.command('rotate'))
    .description('make a new current key; older keys stay in the database and keep verifying what they signed')
    .action(async (opts: CommonOptions) => {
      await withContext(opts, async (ctx) => {
        const id = await rotateKeys(ctx.store);
        console.log(JSON.stringify({ key_id: id, rotated_at: new Date().toISOString() }, null, 2));
      });
    });
}
