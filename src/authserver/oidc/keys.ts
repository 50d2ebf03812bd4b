import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import type { AppContext } from '../../contract/context.js';
import { contextCache } from '../../contract/context-cache.js';
import { write } from '../../platform/store/write-path.js';
import { insertCurrentIdTokenKey, insertFirstIdTokenKey, listIdTokenKeys, type IdTokenKeyRow } from '../store/id-token-keys.js';
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

/** After a failed attempt to make a key, the next attempt waits this long (no keygen on every request while, e.g., the sealing key is refused). */
const MAKE_BACKOFF_MS = 30_000;
/** A key id this instance does not know makes it read the table again at most this often. */
const UNKNOWN_KID_RELOAD_MS = 1_000;

class IdTokenKeyRing {
  private keys: LoadedKey[] = [];
  private loadedAt = 0;
  private loading: Promise<void> | null = null;
  /** One making of each algorithm's first key at a time in this process, and the last failure. */
  private making = new Map<IdTokenAlg, Promise<void>>();
  private failed = new Map<IdTokenAlg, { at: number; error: unknown }>();

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
    // Listed for the ID token lifetime after retirement, plus the time another instance may go on
    // signing with a key before its next reload sees the rotation.
    // JWT access tokens (auth.accessTokenFormat: jwt) are signed with these keys too: listed as long as they live.
    const { auth } = this.ctx.config;
    const ttl = Math.max(auth.idTokenTtl, auth.accessTokenFormat === 'jwt' ? auth.accessTokenTtl : 0);
    const rows = await listIdTokenKeys(this.ctx.store, Date.now() - ttl * 1000 - RELOAD_MS);
    const known = new Map(this.keys.map((k) => [k.row.id, k]));
    // The row is read anew (its retirement may be new); the parsed keys are kept.
    this.keys = rows.map((row) => ({ ...(known.get(row.id) ?? { publicJwk: JSON.parse(row.publicJwk) as JWK }), row }));
    this.loadedAt = Date.now();
  }

  /** Reads the keys again now. */
  reload(): Promise<void> {
    return this.refresh(true);
  }

  private current(alg: IdTokenAlg): LoadedKey | undefined {
    return this.keys.find((k) => k.row.alg === alg && k.row.retiredAt === null);
  }

  /** The current key of `alg`, made now (once per process at a time, backing off after a failure) if the deployment has none yet. */
  private async ensureCurrent(alg: IdTokenAlg): Promise<LoadedKey> {
    await this.refresh();
    const found = this.current(alg);
    if (found) return found;
    const failure = this.failed.get(alg);
    if (failure && Date.now() - failure.at < MAKE_BACKOFF_MS) throw failure.error;
    let making = this.making.get(alg);
    if (!making) {
      making = addIdTokenKey(this.ctx, alg, true)
        .then(() => this.refresh(true))
        .catch((error: unknown) => {
          this.failed.set(alg, { at: Date.now(), error });
          throw error;
        })
        .finally(() => this.making.delete(alg));
      this.making.set(alg, making);
    }
    await making;
    this.failed.delete(alg);
    return this.current(alg)!;
  }

  /** The current key of `alg` with its private half. */
  async signingKey(alg: IdTokenAlg): Promise<{ kid: string; key: CryptoKey | Uint8Array }> {
    const current = await this.ensureCurrent(alg);
    if (!current.privateKey) {
      const opening = importJWK(JSON.parse(this.ctx.sealer.open(current.row.privateKey, `id_token_key:${current.row.id}`)) as JWK, alg);
      current.privateKey = opening;
      opening.catch(() => {
        if (current.privateKey === opening) current.privateKey = undefined; // not kept: the next request tries again
      });
    }
    return { kid: current.row.id, key: await current.privateKey };
  }

  /** The public keys that verify ID tokens still valid: every current key (made if missing: a relying party that fetched the set early knows the key that will sign) and those retired within auth.idTokenTtl. */
  async publicKeys(): Promise<JWK[]> {
    for (const alg of ID_TOKEN_ALGS) await this.ensureCurrent(alg);
    return this.keys.map((k) => ({ ...k.publicJwk, kid: k.row.id, alg: k.row.alg, use: 'sig' }));
  }

  private unknownKidReloadAt = 0;

  /** The public key with this id (read again when unknown here, at most once a second: another instance may have just made it). */
  async publicKey(kid: string): Promise<{ alg: string; jwk: JWK } | null> {
    await this.refresh();
    let found = this.keys.find((k) => k.row.id === kid);
    if (!found && Date.now() - this.unknownKidReloadAt >= UNKNOWN_KID_RELOAD_MS) {
      this.unknownKidReloadAt = Date.now();
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
 * A new current key of `alg`. `onlyIfNone`: unless one exists already — of two instances making
 * the first key at once, one key stands and the other's is dropped (insertFirstIdTokenKey).
 */
async function addIdTokenKey(ctx: AppContext, alg: IdTokenAlg, onlyIfNone: boolean): Promise<void> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'RS256' ? { modulusLength: 2048 } : {}) });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const privateJwk = await exportJWK(privateKey);
  const sealed = await ctx.sealer.sealForStorage(JSON.stringify(privateJwk), `id_token_key:${kid}`);
  const key = { id: kid, alg, privateKey: sealed, publicJwk: JSON.stringify(publicJwk), createdAt: Date.now() };
  await write(ctx.store, async (tx) => (onlyIfNone ? void (await insertFirstIdTokenKey(tx, key)) : insertCurrentIdTokenKey(tx, key)));
}

/** `gatehouse keys rotate`: a new current key for every algorithm; the old ones stay listed until their ID tokens have expired. */
export async function rotateIdTokenKeys(ctx: AppContext): Promise<string[]> {
  for (const alg of ID_TOKEN_ALGS) await addIdTokenKey(ctx, alg, false);
  await idTokenKeys(ctx).reload(); // this process signs with the new keys at once; others within RELOAD_MS
  return [...ID_TOKEN_ALGS];
}
