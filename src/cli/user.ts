import type { Command } from 'commander';
import { randomSecret } from '../platform/crypto/secrets.js';
import { createUser, listUsers, passwordProblem, removeUser, usernameProblem, userSubject } from '../authserver/model/users.js';
import { CliError, modelErrors, withCommonOptions, withContext, type CommonOptions } from './common.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

export function userCommand(program: Command): void {
  const user = program.command('user').description('manage the users (resource owners) who sign in on the consent page');

  withCommonOptions(user.command('add <username>'))
    .description('add a user; without --password a strong password is generated and printed once')
    .option('--password <password>', 'the password (visible in the process list: prefer --password-stdin)')
    .option('--password-stdin', 'read the password from standard input')
    .action(async (username: string, opts: CommonOptions & { password?: string; passwordStdin?: boolean }) => {
      const badName = usernameProblem(username);
      if (badName) throw new CliError(badName);
      if (opts.password !== undefined && opts.passwordStdin) throw new CliError('use --password or --password-stdin, not both');
      const generated = opts.password === undefined && !opts.passwordStdin;
      const password = generated ? randomSecret(18) : opts.passwordStdin ? await readStdin() : opts.password!;
      const badPassword = passwordProblem(password);
      if (badPassword) throw new CliError(badPassword);
      await withContext(opts, async (ctx) => {
        const created = await modelErrors({}, () => createUser(ctx, username, password));
        const out: Record<string, unknown> = { id: created.id, username, subject: userSubject(created.id), created_at: new Date(created.createdAt).toISOString() };
        if (generated) out.password = password;
        console.log(JSON.stringify(out, null, 2));
      });
    });

  withCommonOptions(user.command('remove <username>'))
    .description('remove a user: the grants they gave and their tokens end, their sessions close; their records stay')
    .action(async (username: string, opts: CommonOptions) => {
      await withContext(opts, async (ctx) => {
        const removed = await removeUser(ctx, username);
        if (!removed) throw new CliError(`there is no user named "${username}"`);
        console.log(
          JSON.stringify(
            {
              id: removed.user.id,
              username,
              subject: userSubject(removed.user.id),
              removed: true,
              grants_revoked: removed.grants,
              access_tokens_revoked: removed.accessTokens,
              sessions_ended: removed.sessions,
            },
            null,
            2,
          ),
        );
      });
    });

  withCommonOptions(user.command('list'))
    .description('list the users')
    .action(async (opts: CommonOptions) => {
      await withContext(opts, async (ctx) => {
        const users = await listUsers(ctx);
        console.log(JSON.stringify(users.map((u) => ({ id: u.id, username: u.username, subject: userSubject(u.id), created_at: new Date(u.createdAt).toISOString() })), null, 2));
      });
    });
}
