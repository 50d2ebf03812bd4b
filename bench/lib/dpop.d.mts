// Types of dpop.mjs (plain JavaScript so that the load workers run it without a loader).
export interface DpopKey {
  privateKeyPem: string;
  jwk: object;
}
export function newDpopKey(): DpopKey;
export function dpopProver(key: DpopKey, accessToken?: string): (method: string, url: string) => string;
