import { existsSync, mkdirSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { ConfigError, type Config } from '../config/load.js';

export interface Certificate {
  key: string;
  cert: string;
  /** Where the certificate came from: the configured files, or the development certificate made in the data dir. */
  source: string;
  created: boolean;
}

/** The configured certificate, or a self-signed development certificate created once in the data dir. */
export async function loadCertificate(config: Config): Promise<Certificate> {
  const tls = config.server.tls;
  if (tls) {
    const read = (field: 'cert' | 'key') => {
      try {
        return readFileSync(tls[field], 'utf8');
      } catch (e) {
        throw new ConfigError(config.file, `server.tls.${field}`, `cannot read ${tls[field]} (${(e as NodeJS.ErrnoException).code})`);
      }
    };
    return { cert: read('cert'), key: read('key'), source: tls.cert, created: false };
  }
  const dir = path.join(config.dataDir, 'tls');
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  if (existsSync(certFile) && existsSync(keyFile))
    return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8'), source: certFile, created: false };

  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const names = new Set(['localhost', '127.0.0.1', '::1', config.server.host, new URL(config.publicUrl).hostname.replace(/^\[|\]$/g, '')]);
  names.delete('0.0.0.0');
  names.delete('::');
  const altNames = [...names].map((n) => (isIP(n) ? { type: 7 as const, ip: n } : { type: 2 as const, value: n }));
  const now = new Date();
  // Loaded only here: serving an existing certificate never loads the X.509 toolkit.
  const { generate } = await import('selfsigned');
  const pems = await generate([{ name: 'commonName', value: 'gatehouse development certificate' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: new Date(now.getTime() - 60_000),
    notAfterDate: new Date(now.getTime() + 825 * 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames },
    ],
  });
  // Written via rename so that two processes starting together never read half a file.
  const write = (file: string, text: string, mode: number) => {
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, text, { mode });
    renameSync(tmp, file);
  };
  write(keyFile, pems.private, 0o600);
  write(certFile, pems.cert, 0o644);
  return { cert: pems.cert, key: pems.private, source: certFile, created: true };
}
