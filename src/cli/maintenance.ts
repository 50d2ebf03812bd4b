import type { Command } from 'commander';
import { Argument } from 'commander';
import { writeMaintenance, readMaintenance } from '../platform/store/settings.js';
import { withCommonOptions, withContext, type CommonOptions } from './common.js';

export function maintenanceCommand(program: Command): void {
  withCommonOptions(program.command('maintenance'))
    .description('switch maintenance mode (503 on every instance within a second) on or off, or show it')
    .addArgument(new Argument('[state]', 'on | off | status').choices(['on', 'off', 'status']).default('status'))
    .action(async (state: 'on' | 'off' | 'status', opts: CommonOptions) => {
      await withContext(opts, async (ctx) => {
        if (state !== 'status') await writeMaintenance(ctx.store, state === 'on');
        const m = await readMaintenance(ctx.store);
        console.log(JSON.stringify({ maintenance: m.on, since: m.since ? new Date(m.since).toISOString() : null }));
      });
    });
}
