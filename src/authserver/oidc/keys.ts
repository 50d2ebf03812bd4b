import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import type { AppContext } from '../../contract/context.js';
import { contextCache } from '../../contract/context-cache.js';
import { write } from '../../platform/store/write-path.js';
import { hasCurrentIdTokenKey, insertCurrentIdTokenKey, listIdTokenKeys, type IdTokenKeyRow } from '../store/id-token-keys.js';
import { ID_TOKEN_ALGS, type IdTokenAlg } from '../model/client.js';

// The keys that sign ID tokens (OpenID Connect): one current RS256 and one current ES256 key,
// made when first needed, shared by every instance through the database (the private half
// sealed under the deployment's secret key). `gatehouse keys rotate` adds new current keys; a
// retired key stays in the JWKS until every ID token it signed has expired (auth.idTokenTtl).
// Like the HMAC key ring, the set is read again at most every 10 s, and at once for a key id
// this instance does not know yet.

const RELOAD_MS = 10_000;

interface LoadedKey {
  row: IdTokenKeyRow;
  publicJwk: JWK;
  privateKey?: Promise<CryptoKey | Uint8Array>;
}

class IdTokenKeyRing {
  private keys: LoadedKey[] = [];
  private loadedAt = 0;
  private loading: Promise<void> | null = null;

  constructor(private readonly ctx: AppContext) {}

  /** `force`: a read that starts now (a load under way may have read before the key wanted was added). */
  private async refresh(force = false): Promise<void> {
    if (!force && this.loadedAt && Date.now() - this.loadedAt < RELOAD_MS) return;
    if (force && this.loading) await this.loading.catch(() => undefined);
    if (force || !this.loading) {
      const loading: Promise<void> = this.load().finally(() => {
        if (this.loading === loading) this.loading = null;
      });
      this.loading = loading;
    }
    return this.loading!;
  }

  private async load(): Promise<void> {
    const rows = await listIdTokenKeys(this.ctx.store, Date.now() - this.ctx.config.auth.idTokenTtl * 1000);
    const known = new Map(this.keys.map((k) => [k.row.id, k]));
    this.keys = rows.map((row) => known.get(row.id) ?? { row, publicJwk: JSON.parse(row.publicJwk) as JWK });
    this.loadedAt = Date.now();
  }

  /** Reads the keys again now. */
  reload(): Promise<void> {
    return this.refresh(true);
  }

  /** The current key of `alg` with its private half, made now if the deployment has none yet. */
  async signingKey(alg: IdTokenAlg): Promise<{ kid: string; key: CryptoKey | Uint8Array }> {
    await this.refresh();
    let current = this.keys.find((k) => k.row.alg === alg && k.row.retiredAt === null);
    if (!current) {
      await addIdTokenKey(this.ctx, alg, true);
      await this.refresh(true);
      current = this.keys.find((k) => k.row.alg === alg && k.row.retiredAt === null)!;
    }
    current.privateKey ??= importJWK(JSON.parse(this.ctx.sealer.open(current.row.privateKey, `id_token_key:${current.row.id}`)) as JWK, alg);
    return { kid: current.row.id, key: await current.privateKey };
  }

  /** The public keys that verify ID tokens still valid: every current key and those retired within auth.idTokenTtl. */
  async publicKeys(): Promise<JWK[]> {
    await this.refresh();
    // Published before first use: a relying party that fetched the set early knows the key that will sign.
    const missing = ID_TOKEN_ALGS.filter((alg) => !this.keys.some((k) => k.row.alg === alg && k.row.retiredAt === null));
    if (missing.length) {
      for (const alg of missing) await addIdTokenKey(this.ctx, alg, true);
      await this.refresh(true);
    }
    return this.keys.map((k) => ({ ...k.publicJwk, kid: k.row.id, alg: k.row.alg, use: 'sig' }));
  }

  /** The public key with this id (read again when unknown here: another instance may have just made it). */
  async publicKey(kid: string): Promise<{ alg: string; jwk: JWK } | null> {
    await this.refresh();
    let found = this.keys.find((k) => k.row.id === kid);
    if (!found) {
      await this.refresh(true);
      found = this.keys.find((k) => k.row.id === kid);
    }
    return found ? { alg: found.row.alg, jwk: found.publicJwk } : null;
  }
}

export function idTokenKeys(ctx: AppContext): IdTokenKeyRing {
  return contextCache(ctx, 'id-token-keys', () => new IdTokenKeyRing(ctx));
}

/**
 * A new current key of `alg`. `onlyIfNone`: unless one exists already (two instances making the
 * first key at once end with one current key each time the check and the insert share a write;
 * should both still insert, the later one is current and the earlier stays listed until retired).
 */
async function addIdTokenKey(ctx: AppContext, alg: IdTokenAlg, onlyIfNone: boolean): Promise<void> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'RS256' ? { modulusLength: 2048 } : {}) });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const privateJwk = await exportJWK(privateKey);
  await write(ctx.store, async (tx) => {
    if (onlyIfNone && (await hasCurrentIdTokenKey(tx, alg))) return;
    await insertCurrentIdTokenKey(tx, {
      id: kid,
      alg,
      privateKey: ctx.sealer.seal(JSON.stringify(privateJwk), `id_token_key:${kid}`),
      publicJwk: JSON.stringify(publicJwk),
      createdAt: Date.now(),
    });
  });
}

/** `gatehouse keys rotate`: a new current key for every algorithm; the old ones stay listed until their ID tokens have expired. */
export async function rotateIdTokenKeys(ctx: AppContext): Promise<string[]> {
  for (const alg of ID_TOKEN_ALGS) await addIdTokenKey(ctx, alg, false);
  await idTokenKeys(ctx).reload(); // this process signs with the new keys at once; others within RELOAD_MS
  return [...ID_TOKEN_ALGS];
}
