import { Argument, type Command } from 'commander';
import { randomSecret } from '../platform/crypto/secrets.js';
import { changePassword, createUser, describeUser, findUserByUsername, listUsers, passwordProblem, removeUser, setUserAdmin, updateProfile, usernameProblem, userSubject } from '../authserver/model/users.js';
import { resetSecondFactors } from '../authserver/model/factors.js';
import { describeInvitation, inviteUser, listInvitations, resendVerification, revokeInvitation } from '../authserver/model/lifecycle.js';
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
        printList((await listUsers(ctx)).map(describeUser), ['id', 'username', 'admin', 'email', 'email_verified', 'created_at'], opts, 'no users');
      });
    });

  withCommonOptions(user.command('show <username>'))
    .description('show one user: id, subject, admin, e-mail address and whether it is verified, name')
    .action(async (username: string, opts: CommonOptions) => {
      await withContext(opts, async (ctx) => {
        const found = await findUserByUsername(ctx, username);
        if (!found) throw new CliError(`there is no user named "${username}"`);
        console.log(JSON.stringify(describeUser(found), null, 2));
      });
    });

  withCommonOptions(user.command('invite <email>'))
    .description('invite an address (auth.signup invite or open): a link to the sign-up page is mailed to it, valid 7 days, once')
    .action(async (email: string, opts: CommonOptions) => {
      await withContext(opts, async (ctx) => {
        const invitation = await modelErrors({}, () => inviteUser(ctx, email, null));
        console.log(JSON.stringify(describeInvitation(invitation), null, 2));
      });
    });

  withJsonOption(withCommonOptions(user.command('invitations')))
    .description('list the open invitations (neither used nor expired), newest first: a table on a terminal, else JSON')
    .action(async (opts: CommonOptions & ListOptions) => {
      await withContext(opts, async (ctx) => {
        printList((await listInvitations(ctx)).map(describeInvitation), ['id', 'email', 'created_by', 'expires_at'], opts, 'no open invitations');
      });
    });

  withCommonOptions(user.command('revoke-invitation <id>'))
    .description('revoke an open invitation: the link in its mail stops working')
    .action(async (id: string, opts: CommonOptions) => {
      await withContext(opts, async (ctx) => {
        if (!(await revokeInvitation(ctx, id))) throw new CliError(`there is no open invitation "${id}" (see \`gatehouse user invitations\`)`);
        console.log(JSON.stringify({ id, revoked: true }, null, 2));
      });
    });

  withCommonOptions(user.command('resend-verification <username>'))
    .description("mail a new verification link to a user's unverified address; earlier links stop working")
    .action(async (username: string, opts: CommonOptions) => {
      await withContext(opts, async (ctx) => {
        const found = await findUserByUsername(ctx, username);
        if (!found) throw new CliError(`there is no user named "${username}"`);
        const outcome = await modelErrors({}, () => resendVerification(ctx, found, null));
        if (outcome === 'no-email') throw new CliError(`${username} has no e-mail address: set one with \`gatehouse user update ${username} --email ADDRESS\``);
        if (outcome === 'verified') throw new CliError(`the address of ${username} (${found.email}) is verified already: nothing was sent`);
        console.log(JSON.stringify({ username, email: found.email, status: outcome }, null, 2));
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
