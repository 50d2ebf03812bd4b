import { randomSecret, hmacSha256 } from './secrets.js';
import type { Store } from '../store/store.js';
import { addCurrentSigningKey, listSigningKeys } from '../store/signing-keys.js';

// The server's own secret keys, kept in the database so every instance (and both --role halves)
// shares them. Used for HMACs (CSRF tokens and the mac_key of mac tokens).
// `gatehouse keys rotate` adds a new current key; retired keys still verify what they signed.

export interface SigningKey {
  id: string;
  secret: string;
  retiredAt: number | null;
}

export class KeyRing {
  private byId = new Map<string, SigningKey>();
  private current: SigningKey | null = null;
  private loadedAt = 0;
  private loading: Promise<void> | null = null;

  constructor(private readonly store: Store) {}

  /**
   * Reloads at most every `maxAgeMs` so a rotation on another instance is picked up. Callers that
   * find the keys stale while a reload is under way wait for that one: a busy server reads the
   * table once when the keys age, not once per request in flight. `maxAgeMs` 0 (a key id this
   * ring does not know) reads the table anew: a reload under way may have read it before that
   * key was added.
   */
  async refresh(maxAgeMs = 10_000): Promise<void> {
    if (this.current && Date.now() - this.loadedAt < maxAgeMs) return;
    if (maxAgeMs === 0) return this.load();
    this.loading ??= this.load().finally(() => (this.loading = null));
    return this.loading;
  }

  private async load(): Promise<void> {
    let rows = await listSigningKeys(this.store);
    if (rows.length === 0) {
      await rotateKeys(this.store);
      rows = await listSigningKeys(this.store);
    }
    this.byId = new Map(rows.map((r) => [r.id, r]));
    this.current = [...this.byId.values()].find((k) => k.retiredAt === null) ?? this.byId.get(rows[0].id)!;
    this.loadedAt = Date.now();
  }

  async currentKey(): Promise<SigningKey> {
    await this.refresh();
    return this.current!;
  }

  async key(id: string): Promise<SigningKey | null> {
    await this.refresh();
    if (!this.byId.has(id)) await this.refresh(0);
    return this.byId.get(id) ?? null;
  }

  /** HMAC of `text` with the given key (or the current one): `<keyId>.<mac>`. */
  async sign(text: string): Promise<string> {
    const key = await this.currentKey();
    return `${key.id}.${hmacSha256(key.secret, text)}`;
  }

  async macWith(keyId: string, text: string): Promise<string | null> {
    const key = await this.key(keyId);
    return key ? hmacSha256(key.secret, text) : null;
  }
}

/** Adds a new current key; the previous ones are marked retired but kept for verification. */
export async function rotateKeys(store: Store): Promise<string> {
  return addCurrentSigningKey(store, randomSecret(32));
}
