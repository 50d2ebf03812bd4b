import type { Command } from 'commander';
import { rotateKeys } from '../platform/crypto/keys.js';
import { rotateIdTokenKeys } from '../authserver/oidc/keys.js';
import { withCommonOptions, withContext, type CommonOptions } from './common.js';

export function keysCommand(program: Command): void {
  const keys = program.command('keys').description("manage the server's keys (CSRF tokens, mac_key derivation, ID token signatures)");
  withCommonOptions(keys.command('rotate'))
    .description(
      'make new current keys: the HMAC key and the ID token signing keys (RS256, ES256); older HMAC keys keep verifying what they signed, older ID token keys stay in the JWKS until every ID token they signed has expired',
    )
    .action(async (opts: CommonOptions) => {
      await withContext(opts, async (ctx) => {
        const id = await rotateKeys(ctx.store);
        const algs = await rotateIdTokenKeys(ctx);
        console.log(JSON.stringify({ key_id: id, id_token_algs: algs, rotated_at: new Date().toISOString() }, null, 2));
      });
    });
}
