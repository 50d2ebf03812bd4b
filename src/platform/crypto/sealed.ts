import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Store } from '../store/store.js';
import { readSetting, settleSetting, settleSettingIn } from '../store/settings.js';
import type { WriteTx } from '../store/write-path.js';

// Secrets that must be read back (TOTP secrets, the private halves of the ID-token signing keys)
// are stored sealed: AES-256-GCM under a key derived (HKDF-SHA-256) from the deployment's secret
// key. That key never enters the database, so a copy of the database alone opens nothing:
// `GATEHOUSE_SECRET_KEY` (base64url, at least 32 bytes; every instance of a scale-out deployment
// sets the same) or, when it is not set, `<data dir>/secret.key`, made at first use (mode 0600).
// A sealed value names the key it was sealed under (the first bytes of the key's SHA-256), so a
// value sealed under another key is refused with that reason instead of failing as garbage. The
// first value stored for keeps names its key in the settings (`sealer.key_id`): an instance with
// another key then refuses to store any (sealForStorage) and to start (checkSealingKey), instead
// of writing secrets the other instances cannot open.

const FORMAT = 'v1';
const KEY_SETTING = 'sealer.key_id';
const MISMATCH =
  'this deployment seals its secrets under another secret key: every instance, and the CLI, must use the same GATEHOUSE_SECRET_KEY (or the same <data dir>/secret.key)';

export class SealedSecretError extends Error {}

export class Sealer {
  private key: Buffer | null = null;
  private loadedId = '';

  private claimed: Promise<void> | null = null;
  /** The settings name this process's key (no need to ask again). */
  private keyNamed = false;

  /** `secretKey`: the configured key (base64url), or null for the data dir's file; `store`: where the key in use is named. */
  constructor(
    private readonly secretKey: string | null,
    private readonly dataDir: string,
    private readonly store: Store | null = null,
  ) {}

  /** The short id of this process's key (the first bytes of its SHA-256). */
  keyId(): string {
    this.load();
    return this.loadedId;
  }

  /**
   * `plain` sealed for storing: the deployment's key is named in the settings by the first such
   * value, and a process with another key refuses (SealedSecretError) instead of storing what the
   * others cannot open.
   */
  async sealForStorage(plain: string, context: string): Promise<string> {
    if (this.store) {
      this.claimed ??= settleSetting(this.store, KEY_SETTING, this.keyId()).then((standing) => {
        if (standing !== this.keyId()) throw new SealedSecretError(MISMATCH);
      });
      await this.claimed.catch((e) => {
        this.claimed = null;
        throw e;
      });
      this.keyNamed = true;
    }
    return this.seal(plain, context);
  }

  /**
   * sealForStorage inside a write that is under way (a mail queued with its change): the key is
   * named in that write's transaction, since a write of its own would wait for this one on
   * SQLite's single connection.
   */
  async sealForStorageIn(tx: WriteTx, plain: string, context: string): Promise<string> {
    if (this.store && !this.keyNamed) {
      if ((await settleSettingIn(tx, KEY_SETTING, this.keyId())) !== this.keyId()) throw new SealedSecretError(MISMATCH);
      tx.afterCommit(() => (this.keyNamed = true));
    }
    return this.seal(plain, context);
  }

  private load(): Buffer {
    if (this.key) return this.key;
    let raw: Buffer;
    if (this.secretKey !== null) {
      raw = Buffer.from(this.secretKey, 'base64url');
      if (raw.length < 32) throw new SealedSecretError('GATEHOUSE_SECRET_KEY must be at least 32 bytes, base64url-encoded (e.g. `openssl rand -base64 32`)');
    } else {
      const file = path.join(this.dataDir, 'secret.key');
      try {
        raw = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        mkdirSync(this.dataDir, { recursive: true });
        raw = randomBytes(32);
        try {
          writeFileSync(file, `${raw.toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
        } catch (w) {
          // Another process made it first: use theirs.
          if ((w as NodeJS.ErrnoException).code !== 'EEXIST') throw w;
          raw = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url');
        }
        chmodSync(file, 0o600);
      }
      if (raw.length < 32) throw new SealedSecretError(`${file} must hold at least 32 bytes, base64url-encoded`);
    }
    this.key = Buffer.from(hkdfSync('sha256', raw, Buffer.alloc(0), 'gatehouse sealed secrets v1', 32));
    this.loadedId = createHash('sha256').update(raw).digest('base64url').slice(0, 8);
    return this.key;
  }

  /** `plain` sealed: `v1.<key id>.<iv>.<ciphertext>.<tag>`; `context` (e.g. the row's id) must be given again to open it. */
  seal(plain: string, context = ''): string {
    const key = this.load();
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [FORMAT, this.loadedId, iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
  }

  open(sealed: string, context = ''): string {
    const key = this.load();
    const parts = sealed.split('.');
    if (parts.length !== 5 || parts[0] !== FORMAT) throw new SealedSecretError('not a sealed secret');
    if (parts[1] !== this.loadedId) throw new SealedSecretError(MISMATCH);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(parts[2], 'base64url'));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(Buffer.from(parts[4], 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(parts[3], 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new SealedSecretError('a sealed secret failed its integrity check');
    }
  }
}

/**
 * At `serve`: when the deployment has stored sealed secrets, this process's key must be theirs
 * (SealedSecretError otherwise, before anything is served). A deployment that has sealed nothing
 * yet is not asked for a key.
 */
export async function checkSealingKey(store: Store, sealer: Sealer): Promise<void> {
  const standing = await readSetting(store, KEY_SETTING);
  if (standing !== null && standing !== sealer.keyId()) throw new SealedSecretError(MISMATCH);
}
