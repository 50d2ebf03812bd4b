// DPoP proofs (RFC 9449) for the load generator: made synchronously with node:crypto, one per
// request (a new jti, the request's htu, the current iat), so that autocannon's setupRequest can
// add one to every request of a DPoP target. Plain JavaScript, as load-worker.mjs that uses it.
import { createHash, createPrivateKey, generateKeyPairSync, randomUUID, sign } from 'node:crypto';

const b64 = (text) => Buffer.from(text).toString('base64url');

/** A new ES256 key pair as what a workload carries across to a worker: the private key (PEM) and the public JWK. */
export function newDpopKey() {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), jwk: publicKey.export({ format: 'jwk' }) };
}

/** A proof maker for one key (and, on resource requests, one access token: `ath`). */
export function dpopProver({ privateKeyPem, jwk }, accessToken) {
  const key = createPrivateKey(privateKeyPem);
  const header = b64(JSON.stringify({ typ: 'dpop+jwt', alg: 'ES256', jwk }));
  const ath = accessToken === undefined ? undefined : createHash('sha256').update(accessToken).digest('base64url');
  return (method, url) => {
    const q = url.search(/[?#]/);
    const payload = b64(JSON.stringify({ htm: method, htu: q < 0 ? url : url.slice(0, q), iat: Math.floor(Date.now() / 1000), jti: randomUUID(), ...(ath ? { ath } : {}) }));
    const input = `${header}.${payload}`;
    return `${input}.${sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
  };
}
