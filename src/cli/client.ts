import type { Command } from 'commander';
import { GRANT_TYPES, PublicClientError, describeClient, findClient, listClients, registerClient, removeClient, rotateClientSecret, type GrantType } from '../oauth/clients.js';
import { parseScope, scopeUniverse } from '../oauth/scopes.js';
import { CliError, withCommonOptions, withContext, type CommonOptions } from './common.js';

interface ClientOptions extends CommonOptions {
  secret?: string;
  public?: boolean;
  redirectUri: string[];
  grant: string[];
  scope?: string;
  tokenType: string;
  name?: string;
}

const CLIENT_ID = /^[A-Za-z0-9._~-]{1,128}$/;
const collect = (value: string, previous: string[]) => [...previous, value];

/** A redirect URI must be absolute and exact (no fragment); plain http only for the loopback interface (RFC 8252). */
function checkRedirectUri(uri: string): void {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new CliError(`--redirect-uri ${uri}: not an absolute URI`);
  }
  if (url.hash || uri.includes('#')) throw new CliError(`--redirect-uri ${uri}: must not contain a fragment`);
  if (url.protocol === 'http:' && !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname))
    throw new CliError(`--redirect-uri ${uri}: plain http is only allowed for 127.0.0.1, [::1] and localhost`);
  if (/^(javascript|data|vbscript|file):$/i.test(url.protocol)) throw new CliError(`--redirect-uri ${uri}: scheme ${url.protocol} is not allowed`);
}

export function clientCommand(program: Command): void {
  const client = program.command('client').description('manage the OAuth clients (third-party applications)');

  withCommonOptions(client.command('add <client_id>'))
    .description('register a client and print it as JSON (the secret is shown only this once)')
    .option('--secret <secret>', 'the client secret (default: a strong generated one)')
    .option('--public', 'a public client (no secret; must use PKCE)')
    .option('--redirect-uri <uri>', 'a redirect URI (repeatable)', collect, [])
    .option('--grant <type>', `an allowed grant (repeatable): ${GRANT_TYPES.join(', ')}`, collect, [])
    .option('--scope <scope>', 'the scopes it may request, space-separated (default: every scope)')
    .option('--token-type <type>', 'bearer | mac', 'bearer')
    .option('--name <name>', 'display name shown on the consent page (default: the client id)')
    .action(async (id: string, opts: ClientOptions) => {
      if (!CLIENT_ID.test(id)) throw new CliError('a client id is 1-128 letters, digits or . _ ~ -');
      if (opts.public && opts.secret !== undefined) throw new CliError('a --public client has no --secret');
      if (opts.secret !== undefined && opts.secret.length < 16)
        process.stderr.write('gatehouse: warning: a --secret shorter than 16 characters is easy to guess; omit it to get a generated one\n');
      if (opts.tokenType !== 'bearer' && opts.tokenType !== 'mac') throw new CliError('--token-type must be bearer or mac');
      if (opts.grant.length === 0) throw new CliError(`give at least one --grant (${GRANT_TYPES.join(', ')})`);
      for (const g of opts.grant) if (!(GRANT_TYPES as readonly string[]).includes(g)) throw new CliError(`--grant ${g}: must be one of ${GRANT_TYPES.join(', ')}`);
      const grants = [...new Set(opts.grant)] as GrantType[];
      if (opts.public && grants.includes('client_credentials')) throw new CliError('a public client cannot use client_credentials');
      if ((grants.includes('authorization_code') || grants.includes('implicit')) && opts.redirectUri.length === 0)
        throw new CliError('authorization_code and implicit need at least one --redirect-uri');
      opts.redirectUri.forEach(checkRedirectUri);
      if (opts.name !== undefined && (opts.name.trim() === '' || opts.name.length > 100)) throw new CliError('--name must be 1-100 characters');

      await withContext(opts, async (ctx) => {
        let scope: string | null = null;
        if (opts.scope !== undefined) {
          const parsed = parseScope(opts.scope.trim().replace(/\s+/g, ' '));
          const universe = scopeUniverse(ctx.collections);
          if (!parsed || parsed.length === 0) throw new CliError('--scope must list scope values separated by spaces');
          const unknown = parsed.filter((s) => !universe.includes(s));
          if (unknown.length) throw new CliError(`--scope: unknown scope ${unknown.join(' ')} (known: ${universe.join(' ')})`);
          scope = universe.filter((s) => parsed.includes(s)).join(' ');
        }
        if (await findClient(ctx, id)) throw new CliError(`a client "${id}" already exists`);
        const { client: created, secret } = await registerClient(ctx, {
          id,
          name: opts.name?.trim(),
          public: opts.public === true,
          secret: opts.secret,
          redirectUris: [...new Set(opts.redirectUri)],
          grantTypes: grants,
          scope,
          tokenType: opts.tokenType as 'bearer' | 'mac',
        });
        const out = describeClient(created);
        if (secret !== null) out.client_secret = secret;
        console.log(JSON.stringify(out, null, 2));
      });
    });

  withCommonOptions(client.command('remove <client_id>'))
    .description('remove a client: its grants and tokens end at once, its credentials stop working')
    .action(async (id: string, opts: CommonOptions) => {
      await withContext(opts, async (ctx) => {
        const revoked = await removeClient(ctx, id);
        if (!revoked) throw new CliError(`there is no client "${id}"`);
        console.log(JSON.stringify({ client_id: id, removed: true, grants_revoked: revoked.grants, access_tokens_revoked: revoked.accessTokens }, null, 2));
      });
    });

  withCommonOptions(client.command('rotate-secret <client_id>'))
    .description('give a confidential client a new secret, printed once; the old one stops working within a second (issued tokens stay valid)')
    .option('--secret <secret>', 'the new secret (default: a strong generated one)')
    .action(async (id: string, opts: CommonOptions & { secret?: string }) => {
      if (opts.secret !== undefined && opts.secret.length < 16)
        process.stderr.write('gatehouse: warning: a --secret shorter than 16 characters is easy to guess; omit it to get a generated one\n');
      await withContext(opts, async (ctx) => {
        let rotated;
        try {
          rotated = await rotateClientSecret(ctx, id, opts.secret);
        } catch (e) {
          if (e instanceof PublicClientError) throw new CliError(e.message);
          throw e;
        }
        if (!rotated) throw new CliError(`there is no client "${id}"`);
        console.log(JSON.stringify({ ...describeClient(rotated.client), client_secret: rotated.secret }, null, 2));
      });
    });

  withCommonOptions(client.command('list'))
    .description('list the clients (never their secrets)')
    .action(async (opts: CommonOptions) => {
      await withContext(opts, async (ctx) => {
        console.log(JSON.stringify((await listClients(ctx)).map(describeClient), null, 2));
      });
    });
}
