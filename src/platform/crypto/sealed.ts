import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

// Secrets that must be read back (TOTP secrets, the private halves of the ID-token signing keys)
// are stored sealed: AES-256-GCM under a key derived (HKDF-SHA-256) from the deployment's secret
// key. That key never enters the database, so a copy of the database alone opens nothing:
// `GATEHOUSE_SECRET_KEY` (base64url, at least 32 bytes; every instance of a scale-out deployment
// sets the same) or, when it is not set, `<data dir>/secret.key`, made at first use (mode 0600).
// A sealed value names the key it was sealed under (the first bytes of the key's SHA-256), so a
// value sealed under another key is refused with that reason instead of failing as garbage.

const FORMAT = 'v1';

export class SealedSecretError extends Error {}

export class Sealer {
  private key: Buffer | null = null;
  private keyId = '';

  /** `secretKey`: the configured key (base64url), or null for the data dir's file. */
  constructor(
    private readonly secretKey: string | null,
    private readonly dataDir: string,
  ) {}

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
    this.keyId = createHash('sha256').update(raw).digest('base64url').slice(0, 8);
    return this.key;
  }

  /** `plain` sealed: `v1.<key id>.<iv>.<ciphertext>.<tag>`; `context` (e.g. the row's id) must be given again to open it. */
  seal(plain: string, context = ''): string {
    const key = this.load();
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [FORMAT, this.keyId, iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
  }

  open(sealed: string, context = ''): string {
    const key = this.load();
    const parts = sealed.split('.');
    if (parts.length !== 5 || parts[0] !== FORMAT) throw new SealedSecretError('not a sealed secret');
    if (parts[1] !== this.keyId)
      throw new SealedSecretError('this secret was sealed under another secret key: every instance must use the same GATEHOUSE_SECRET_KEY (or the same <data dir>/secret.key)');
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
