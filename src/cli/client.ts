import type { Command } from 'commander';
import { GRANT_TYPES, describeClient, findClient, listClients, registerClient, removeClient, rotateClientSecret, updateClient } from '../authserver/model/clients.js';
import { CliError, modelErrors, withCommonOptions, withContext, type CommonOptions } from './common.js';
import { cell, printList, withJsonOption, type Column, type ListOptions } from './output.js';
import { registrationTokenCommands } from './registration-tokens.js';

interface ClientOptions extends CommonOptions {
  secret?: string;
  public?: boolean;
  redirectUri: string[];
  grant: string[];
  scope?: string;
  tokenType: string;
  name?: string;
  origin: string[];
  uri?: string;
  verified?: boolean;
  introspect?: boolean;
  requirePkce?: boolean;
  requirePar?: boolean;
  dpop?: boolean;
  postLogoutRedirectUri: string[];
  idTokenSignedResponseAlg?: string;
}

const CLIENT_COLUMNS: Column[] = ['client_id', 'name', 'type', 'grant_types', { key: 'scope', show: (v) => (v === null ? '(every scope)' : cell(v)) }, 'token_type', 'created_at'];

const collect = (value: string, previous: string[]) => [...previous, value];

/** The command-line flag of each field the client rules name. */
const FLAGS: Record<string, string> = {
  client_secret: '--secret',
  grant_types: '--grant',
  redirect_uris: '--redirect-uri',
  scope: '--scope',
  token_type: '--token-type',
  name: '--name',
  origins: '--origin',
  uri: '--uri',
  introspect: '--introspect',
  require_pkce: '--require-pkce',
  require_pushed_authorization_requests: '--require-par',
  dpop_bound_access_tokens: '--dpop',
  post_logout_redirect_uris: '--post-logout-redirect-uri',
  id_token_signed_response_alg: '--id-token-signed-response-alg',
};

export function clientCommand(program: Command): void {
  const client = program.command('client').description('manage the OAuth clients (third-party applications)');

  withCommonOptions(client.command('add <client_id>'))
    .description('register a client and print it as JSON (the secret is shown only this once)')
    .option('--secret <secret>', 'the client secret, at least 32 characters (default: a strong generated one)')
    .option('--public', 'a public client (no secret; must use PKCE)')
    .option('--redirect-uri <uri>', 'a redirect URI (repeatable)', collect, [])
    .option('--grant <type>', `an allowed grant (repeatable): ${GRANT_TYPES.join(', ')}`, collect, [])
    .option('--scope <scope>', 'the scopes it may request, space-separated (default: every collection scope; admin only when named)')
    .option('--token-type <type>', 'bearer | mac', 'bearer')
    .option('--name <name>', 'display name shown on the consent page (default: the client id)')
    .option('--uri <url>', 'its home page, shown (as its host) on the consent and account pages')
    .option('--verified', 'you vouch for this application: the consent page shows no "not verified" note')
    .option('--introspect', 'a resource server: it may introspect every client\'s tokens (a client may always introspect its own)')
    .option('--require-pkce', 'its authorization code requests must carry a PKCE challenge (S256), though it is confidential')
    .option('--require-par', 'its authorization requests must be pushed to {auth_url}/par first (RFC 9126)')
    .option('--dpop', 'its token requests must carry a DPoP proof: its tokens are always bound to its key (RFC 9449)')
    .option('--origin <origin>', 'a browser origin allowed to call the API with its tokens (CORS; repeatable; its redirect URIs\' origins always are)', collect, [])
    .option('--post-logout-redirect-uri <uri>', 'OpenID Connect: where RP-initiated logout may send the browser back (repeatable)', collect, [])
    .option('--id-token-signed-response-alg <alg>', 'OpenID Connect: RS256 | ES256, how its ID tokens are signed (default RS256)')
    .action(async (id: string, opts: ClientOptions) => {
      await withContext(opts, async (ctx) => {
        const { client: created, secret } = await modelErrors(FLAGS, () =>
          registerClient(ctx, {
            id,
            name: opts.name,
            public: opts.public === true,
            secret: opts.secret,
            redirectUris: opts.redirectUri,
            grantTypes: opts.grant,
            scope: opts.scope ?? null,
            tokenType: opts.tokenType,
            origins: opts.origin,
            uri: opts.uri ?? null,
            verified: opts.verified === true,
            introspect: opts.introspect === true,
            requirePkce: opts.requirePkce === true,
            requirePar: opts.requirePar === true,
            dpopBound: opts.dpop === true,
            postLogoutRedirectUris: opts.postLogoutRedirectUri,
            idTokenSignedResponseAlg: opts.idTokenSignedResponseAlg,
          }),
        );
        const out = describeClient(created);
        if (secret !== null) out.client_secret = secret;
        console.log(JSON.stringify(out, null, 2));
      });
    });

  withCommonOptions(client.command('update <client_id>'))
    .description('change a client (the registration rules apply) and print it as JSON')
    .option('--require-par', 'its authorization requests must be pushed to {auth_url}/par first (RFC 9126)')
    .option('--no-require-par', 'its authorization requests may be sent by the browser again')
    .option('--dpop', 'its token requests must carry a DPoP proof: its tokens are always bound to its key (RFC 9449)')
    .option('--no-dpop', 'its token requests may go without a DPoP proof again')
    .option('--verified', 'you vouch for this application (e.g. one that registered itself): the consent page shows no "not verified" note')
    .option('--no-verified', 'the consent page says again that you have not verified it')
    .action(async (id: string, opts: CommonOptions & { requirePar?: boolean; dpop?: boolean; verified?: boolean }) => {
      await withContext(opts, async (ctx) => {
        const updated = await modelErrors(FLAGS, () => updateClient(ctx, id, { requirePar: opts.requirePar, dpopBound: opts.dpop, verified: opts.verified }));
        if (!updated) throw new CliError(`there is no client "${id}"`);
        console.log(JSON.stringify(describeClient(updated), null, 2));
      });
    });

  withCommonOptions(client.command('show <client_id>'))
    .description('print a client as JSON (never its secret)')
    .action(async (id: string, opts: CommonOptions) => {
      await withContext(opts, async (ctx) => {
        const found = await findClient(ctx, id, true);
        if (!found) throw new CliError(`there is no client "${id}"`);
        console.log(JSON.stringify(describeClient(found), null, 2));
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
    .option('--secret <secret>', 'the new secret, at least 32 characters (default: a strong generated one)')
    .action(async (id: string, opts: CommonOptions & { secret?: string }) => {
      await withContext(opts, async (ctx) => {
        const rotated = await modelErrors(FLAGS, () => rotateClientSecret(ctx, id, opts.secret));
        if (!rotated) throw new CliError(`there is no client "${id}"`);
        console.log(JSON.stringify({ ...describeClient(rotated.client), client_secret: rotated.secret }, null, 2));
      });
    });

  withJsonOption(withCommonOptions(client.command('list')))
    .description('list the clients (never their secrets): a table on a terminal, else JSON')
    .action(async (opts: CommonOptions & ListOptions) => {
      await withContext(opts, async (ctx) => {
        printList((await listClients(ctx)).map(describeClient), CLIENT_COLUMNS, opts, 'no clients');
      });
    });

  registrationTokenCommands(client);
}
