import type { Command } from 'commander';
import { findGrant, listGrants, revokeGrant } from '../authserver/tokens.js';
import { findUserByUsername, userSubject } from '../authserver/model/users.js';
import { findClient } from '../authserver/model/clients.js';
import { isMetadataDocumentId } from '../authserver/model/client-metadata-document.js';
import { CliError, withCommonOptions, withContext, type CommonOptions } from './common.js';
import { printList, withJsonOption, type ListOptions } from './output.js';

const GRANT_COLUMNS = ['id', 'subject', 'client_id', 'scope', 'created_at', 'expires_at', 'last_used_at'];

export function grantCommand(program: Command): void {
  const grant = program.command('grant').description('see and revoke the grants users and clients hold (what a token was issued under)');

  withJsonOption(withCommonOptions(grant.command('list')))
    .description('list the live grants, newest first: a table on a terminal, else JSON')
    .option('--user <username>', "only the grants this user gave (subject user:<id>)")
    .option('--client <client_id>', 'only the grants this client holds')
    .action(async (opts: CommonOptions & ListOptions & { user?: string; client?: string }) => {
      await withContext(opts, async (ctx) => {
        const filter: { subject?: string; clientId?: string } = {};
        if (opts.user !== undefined) {
          const user = await findUserByUsername(ctx, opts.user);
          if (!user) throw new CliError(`--user: there is no user named "${opts.user}"`);
          filter.subject = userSubject(user.id);
        }
        if (opts.client !== undefined) {
          // A metadata document's client is in no table: its grants are listed by its URL, nothing fetched.
          if (!isMetadataDocumentId(opts.client) && !(await findClient(ctx, opts.client))) throw new CliError(`--client: there is no client "${opts.client}"`);
          filter.clientId = opts.client;
        }
        printList(await listGrants(ctx, filter), GRANT_COLUMNS, opts, 'no live grants');
      });
    });

  withCommonOptions(grant.command('revoke <grant_id>'))
    .description('revoke a grant: its access and refresh tokens stop working (every instance within a second)')
    .action(async (id: string, opts: CommonOptions) => {
      await withContext(opts, async (ctx) => {
        if (!(await revokeGrant(ctx, id, 'revoked with the command line'))) {
          const found = await findGrant(ctx, id);
          throw new CliError(found ? `grant "${id}" is already revoked` : `there is no grant "${id}"`);
        }
        const revoked = (await findGrant(ctx, id))!;
        console.log(JSON.stringify({ id, subject: revoked.subject, client_id: revoked.clientId, revoked: true }, null, 2));
      });
    });
}
