import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { createRegistrationToken, describeRegistrationToken, listRegistrationTokens, revokeRegistrationToken } from '../authserver/model/registration.js';
import { CliError, modelErrors, withCommonOptions, withContext, type CommonOptions } from './common.js';
import { printList, withJsonOption, type ListOptions } from './output.js';

// `gatehouse client registration-token`, `client registration-tokens`, `client
// revoke-registration-token`: the initial access tokens of dynamic client registration
// (auth.registration: token; docs/oauth.md, Registering clients). The token is printed once.

const whole = (value: string): number => {
  if (!/^\d{1,9}$/.test(value)) throw new InvalidArgumentError('must be a whole number');
  return Number(value);
};

export function registrationTokenCommands(client: Command): void {
  withCommonOptions(client.command('registration-token'))
    .description('make an initial access token for dynamic client registration (auth.registration: token) and print it once, as JSON')
    .option('--ttl <seconds>', 'how long it stays valid, 60 to 2592000 seconds (default 86400: a day)', whole)
    .option('--uses <n>', 'how many clients it may register (default 1)', whole)
    .action(async (opts: CommonOptions & { ttl?: number; uses?: number }) => {
      await withContext(opts, async (ctx) => {
        const { token, registrationToken } = await modelErrors({ ttl: '--ttl', uses: '--uses' }, () => createRegistrationToken(ctx, { ttl: opts.ttl, uses: opts.uses }, null));
        console.log(JSON.stringify({ ...describeRegistrationToken(registrationToken), token }, null, 2));
      });
    });

  withJsonOption(withCommonOptions(client.command('registration-tokens')))
    .description('list the initial access tokens still usable (never the tokens): a table on a terminal, else JSON')
    .action(async (opts: CommonOptions & ListOptions) => {
      await withContext(opts, async (ctx) => {
        printList((await listRegistrationTokens(ctx)).map(describeRegistrationToken), ['id', 'created_at', 'expires_at', 'uses_left'], opts, 'no registration tokens');
      });
    });

  withCommonOptions(client.command('revoke-registration-token <id>'))
    .description('revoke an initial access token: it registers no more clients (those it registered stay)')
    .action(async (id: string, opts: CommonOptions) => {
      await withContext(opts, async (ctx) => {
        if (!(await revokeRegistrationToken(ctx, id))) throw new CliError(`there is no registration token "${id}" (see \`gatehouse client registration-tokens\`)`);
        console.log(JSON.stringify({ id, revoked: true }, null, 2));
      });
    });
}
