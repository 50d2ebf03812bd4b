import { Argument, type Command } from 'commander';
import { randomSecret } from '../platform/crypto/secrets.js';
import { changePassword, createUser, describeUser, findUserByUsername, listUsers, passwordProblem, removeUser, setUserAdmin, updateProfile, usernameProblem, userSubject } from '../authserver/model/users.js';
import { resetSecondFactors } from '../authserver/model/factors.js';
import { CliError, modelErrors, withCommonOptions, withContext, type CommonOptions } from './common.js';
import { askHidden, readStdin } from './prompt.js';
import { printList, withJsonOption, type ListOptions } from './output.js';

/** The new password of `user passwd`: the option, else standard input when piped, else asked twice on the terminal. */
async function newPassword(opts: { password?: string; passwordStdin?: boolean }): Promise<string> {
  if (opts.password !== undefined) return opts.password;
  if (opts.passwordStdin || !process.stdin.isTTY) return readStdin();
  const [first, again] = await askHidden(['New password: ', 'New password again: ']);
  if (first !== again) throw new CliError('the two passwords differ; nothing was changed');
  return first;
}

/** The command-line flag of each profile field the user rules name. */
const PROFILE_FLAGS: Record<string, string> = { email: '--email', name: '--name' };

export function userCommand(program: Command): void {
  const user = program.command('user').description('manage the users (resource owners) who sign in on the consent page');

  withCommonOptions(user.command('add <username>'))
    .description('add a user; without --password a strong password is generated and printed once')
    .option('--password <password>', 'the password (visible in the process list: prefer --password-stdin)')
    .option('--password-stdin', 'read the password from standard input')
    .option('--admin', 'an admin: may be granted the admin scope (the admin API and console)')
    .option('--email <address>', 'their e-mail address (OpenID Connect `email`)')
    .option('--email-verified', 'you have verified that address')
    .option('--name <name>', 'their full name (OpenID Connect `name`)')
    .action(async (username: string, opts: CommonOptions & { password?: string; passwordStdin?: boolean; admin?: boolean; email?: string; emailVerified?: boolean; name?: string }) => {
      const badName = usernameProblem(username);
      if (badName) throw new CliError(badName);
      if (opts.password !== undefined && opts.passwordStdin) throw new CliError('use --password or --password-stdin, not both');
      const generated = opts.password === undefined && !opts.passwordStdin;
      const password = generated ? randomSecret(18) : opts.passwordStdin ? await readStdin() : opts.password!;
      const badPassword = passwordProblem(password);
      if (badPassword) throw new CliError(badPassword);
      await withContext(opts, async (ctx) => {
        const created = await modelErrors(PROFILE_FLAGS, () =>
          createUser(ctx, username, password, { admin: opts.admin === true, email: opts.email, emailVerified: opts.emailVerified, name: opts.name }),
        );
        const out = describeUser(created);
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

  withJsonOption(withCommonOptions(user.command('list')))
    .description('list the users: a table on a terminal, else JSON')
    .action(async (opts: CommonOptions & ListOptions) => {
      await withContext(opts, async (ctx) => {
        printList((await listUsers(ctx)).map(describeUser), ['id', 'username', 'admin', 'created_at'], opts, 'no users');
      });
    });

  withCommonOptions(user.command('passwd <username>'))
    .description("set a user's password (without an option: read from standard input when piped, else asked twice); their sign-in sessions end, the grants they gave stay")
    .option('--password <password>', 'the new password (visible in the process list: prefer --password-stdin)')
    .option('--password-stdin', 'read the new password from standard input')
    .action(async (username: string, opts: CommonOptions & { password?: string; passwordStdin?: boolean }) => {
      if (opts.password !== undefined && opts.passwordStdin) throw new CliError('use --password or --password-stdin, not both');
      await withContext(opts, async (ctx) => {
        if (!(await findUserByUsername(ctx, username))) throw new CliError(`there is no user named "${username}"`);
        const password = await newPassword(opts);
        const changed = await modelErrors({}, () => changePassword(ctx, username, password));
        if (!changed) throw new CliError(`there is no user named "${username}"`);
        console.log(JSON.stringify({ ...describeUser(changed), password_changed: true }, null, 2));
      });
    });

  withCommonOptions(user.command('update <username>'))
    .description("change a user's e-mail address or name (an empty value clears it); a new address is unverified unless --email-verified")
    .option('--email <address>', 'their e-mail address')
    .option('--email-verified', 'you have verified the address')
    .option('--no-email-verified', 'the address is not verified')
    .option('--name <name>', 'their full name')
    .action(async (username: string, opts: CommonOptions & { email?: string; emailVerified?: boolean; name?: string }) => {
      await withContext(opts, async (ctx) => {
        const changed = await modelErrors(PROFILE_FLAGS, () => updateProfile(ctx, username, { email: opts.email, emailVerified: opts.emailVerified, name: opts.name }));
        if (!changed) throw new CliError(`there is no user named "${username}"`);
        console.log(JSON.stringify(describeUser(changed), null, 2));
      });
    });

  withCommonOptions(user.command('reset-factors <username>'))
    .description("remove every second factor (authenticator app, passkeys) and recovery code of a user who lost them; their sessions end, and their next sign-in is with the password alone (under auth.mfa, they set up a factor again)")
    .action(async (username: string, opts: CommonOptions) => {
      await withContext(opts, async (ctx) => {
        const reset = await resetSecondFactors(ctx, username, null);
        if (!reset) throw new CliError(`there is no user named "${username}"`);
        console.log(JSON.stringify({ ...describeUser(reset.user), factors_removed: reset.factors }, null, 2));
      });
    });

  withCommonOptions(user.command('admin <username>'))
    .description('make a user an admin (on) or not (off); off also revokes the grants that carry the admin scope')
    .addArgument(new Argument('<state>', 'on | off').choices(['on', 'off']))
    .action(async (username: string, state: 'on' | 'off', opts: CommonOptions) => {
      await withContext(opts, async (ctx) => {
        const changed = await setUserAdmin(ctx, username, state === 'on');
        if (!changed) throw new CliError(`there is no user named "${username}"`);
        console.log(JSON.stringify(describeUser(changed), null, 2));
      });
    });
}
