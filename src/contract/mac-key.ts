import type { KeyRing } from '../platform/crypto/keys.js';

// How a mac token's key is made: derived (never stored) from the server key it was issued under,
// so the authorization server that issues it and the resource server that checks it agree.

export async function deriveMacKey(keys: KeyRing, keyId: string, accessToken: string): Promise<string | null> {
  return keys.macWith(keyId, `mac_key:${accessToken}`);
}
