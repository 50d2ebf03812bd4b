import type { Command } from 'commander';
import { addWebhook, describeWebhook, listWebhooks, removeWebhook } from '../webhooks/webhooks.js';
import { CliError, modelErrors, withCommonOptions, withContext, type CommonOptions } from './common.js';
import { printList, withJsonOption, type ListOptions } from './output.js';

const WEBHOOK_COLUMNS = ['id', 'url', 'events', 'collections', 'created_at'];
const FLAGS = { url: '<url>', events: '--events', collections: '--collections' };

const commaList = (value: string): string[] =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export function webhookCommand(program: Command): void {
  const webhook = program.command('webhook').description('deliver events to an https URL, signed per Standard Webhooks (docs/events.md)');

  withCommonOptions(webhook.command('add <url>'))
    .description('add a webhook; prints its id and signing secret (whsec_…), shown this once')
    .option('--events <types>', 'only these event types, comma-separated (default: all)', commaList)
    .option('--collections <names>', 'only events of these collections, comma-separated (default: all)', commaList)
    .action(async (url: string, opts: CommonOptions & { events?: string[]; collections?: string[] }) => {
      await withContext(opts, async (ctx) => {
        const { webhook: created, secret } = await modelErrors(FLAGS, () => addWebhook(ctx, { url, events: opts.events, collections: opts.collections }));
        console.log(JSON.stringify({ ...describeWebhook(created), secret }, null, 2));
      });
    });

  withJsonOption(withCommonOptions(webhook.command('list')))
    .description('list the webhooks (never their secrets): a table on a terminal, else JSON')
    .action(async (opts: CommonOptions & ListOptions) => {
      await withContext(opts, async (ctx) => {
        printList((await listWebhooks(ctx)).map(describeWebhook), WEBHOOK_COLUMNS, opts, 'no webhooks');
      });
    });

  withCommonOptions(webhook.command('remove <id>'))
    .description('remove a webhook: its pending deliveries are dropped')
    .action(async (id: string, opts: CommonOptions) => {
      await withContext(opts, async (ctx) => {
        if (!(await removeWebhook(ctx, id))) throw new CliError(`there is no webhook "${id}"`);
        console.log(JSON.stringify({ id, removed: true }, null, 2));
      });
    });
}
