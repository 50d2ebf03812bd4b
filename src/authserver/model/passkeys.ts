import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransportFuture,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { AppContext } from '../../contract/context.js';
import { InvalidInput } from '../../contract/errors.js';
import { newTimeOrderedId, sha256 } from '../../platform/crypto/secrets.js';
import { write } from '../../platform/store/write-path.js';
import { findFactorByCredentialId, insertChallenge, listFactorsOfUser, takeChallenge, usePasskey } from '../store/factors.js';
import { addFactor } from './factors.js';
import { findUserById, type User } from './users.js';

// Passkeys (WebAuthn, docs/oauth.md, Second factors), checked by @simplewebauthn/server:
// registered on the account page, used on the login page (discoverable credentials: no user name
// first). A passkey sign-in is both factors at once (something held, unlocked by the user), so it
// satisfies `auth.mfa`. Challenges are stored server side by their hash, single use, 5 minutes,
// in the database so that any instance can finish a ceremony another began.
//
// The relying party is `server.publicUrl`'s host. Browsers refuse WebAuthn on an IP address, so a
// public URL on a loopback address (127.0.0.1, ::1) serves passkeys as `localhost` on the same port.

const CHALLENGE_SECONDS = 5 * 60;
const LOOPBACK = new Set(['127.0.0.1', '[::1]', '::1']);

/** The relying party: its ID (what options name) and the origins a response may come from. */
export function relyingParty(ctx: AppContext): { id: string; origins: string[] } {
  const url = new URL(ctx.config.publicUrl);
  if (!LOOPBACK.has(url.hostname)) return { id: url.hostname, origins: [url.origin] };
  return { id: 'localhost', origins: [url.origin, `https://localhost${url.port ? `:${url.port}` : ''}`] };
}

async function rememberChallenge(ctx: AppContext, challenge: string, purpose: 'register' | 'signin', userId: string | null): Promise<void> {
  await write(ctx.store, (tx) => insertChallenge(tx, { hash: sha256(challenge), purpose, userId, expiresAt: Date.now() + CHALLENGE_SECONDS * 1000 }));
}

/** Takes the response's challenge out of the store (single use); its user, or null when it is not one we issued for this purpose. */
async function takeResponseChallenge(ctx: AppContext, clientDataJSON: string, purpose: 'register' | 'signin'): Promise<{ challenge: string; userId: string | null } | null> {
  let challenge: unknown;
  try {
    challenge = (JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8')) as { challenge?: unknown }).challenge;
  } catch {
    return null;
  }
  if (typeof challenge !== 'string' || challenge.length > 200) return null;
  const taken = await write(ctx.store, (tx) => takeChallenge(tx, sha256(challenge as string), purpose, Date.now()));
  return taken ? { challenge, userId: taken.userId } : null;
}

/** A credential JSON a form posted, or null when it is not one. */
function parseCredential<T>(text: string | undefined): T | null {
  if (!text || text.length > 20_000) return null;
  try {
    const value = JSON.parse(text) as { id?: unknown; response?: { clientDataJSON?: unknown } };
    return value && typeof value.id === 'string' && typeof value.response?.clientDataJSON === 'string' ? (value as T) : null;
  } catch {
    return null;
  }
}

/** Options for registering a new passkey of this user (the challenge remembered). */
export async function passkeyRegistrationOptions(ctx: AppContext, user: User): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const existing = (await listFactorsOfUser(ctx.store, user.id)).filter((f) => f.kind === 'passkey' && f.credentialId);
  const options = await generateRegistrationOptions({
    rpName: 'gatehouse',
    rpID: relyingParty(ctx).id,
    userName: user.username,
    userID: new TextEncoder().encode(user.id),
    attestationType: 'none',
    excludeCredentials: existing.map((f) => ({ id: f.credentialId!, transports: f.transports as AuthenticatorTransportFuture[] })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    timeout: CHALLENGE_SECONDS * 1000,
  });
  await rememberChallenge(ctx, options.challenge, 'register', user.id);
  return options;
}

/** Verifies a registration and stores the passkey; answers the recovery codes when it is the user's first factor. */
export async function registerPasskey(ctx: AppContext, user: User, posted: string | undefined, actor: string | null): Promise<string[]> {
  const refused = (why: string) => new InvalidInput(`the passkey was not registered: ${why}`, { credential: why });
  const response = parseCredential<RegistrationResponseJSON>(posted);
  if (!response) throw refused('no passkey response was sent');
  const challenge = await takeResponseChallenge(ctx, response.response.clientDataJSON, 'register');
  if (!challenge || challenge.userId !== user.id) throw refused('the request expired; try again');
  const rp = relyingParty(ctx);
  let verification;
  try {
    verification = await verifyRegistrationResponse({ response, expectedChallenge: challenge.challenge, expectedOrigin: rp.origins, expectedRPID: rp.id, requireUserVerification: true });
  } catch {
    throw refused('the response could not be verified');
  }
  if (!verification.verified) throw refused('the response could not be verified');
  const { credential } = verification.registrationInfo;
  if (await findFactorByCredentialId(ctx.store, credential.id)) throw refused('this passkey is registered already');
  const now = Date.now();
  return addFactor(
    ctx,
    user,
    {
      id: newTimeOrderedId(),
      userId: user.id,
      kind: 'passkey',
      label: 'Passkey',
      secret: null,
      lastStep: null,
      credentialId: credential.id,
      publicKey: Buffer.from(credential.publicKey).toString('base64url'),
      counter: credential.counter,
      transports: credential.transports ?? [],
      createdAt: now,
      lastUsedAt: null,
    },
    actor,
  );
}

/** Options for signing in with any passkey of this site (discoverable: no user name first). */
export async function passkeySignInOptions(ctx: AppContext): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const options = await generateAuthenticationOptions({ rpID: relyingParty(ctx).id, userVerification: 'required', timeout: CHALLENGE_SECONDS * 1000 });
  await rememberChallenge(ctx, options.challenge, 'signin', null);
  return options;
}

/**
 * The user a passkey response signs in, or null: the challenge must be one we issued (taken:
 * single use), the credential registered, the signature, origin, RP ID and user verification
 * right, and its counter moves on from the stored one (compare and set).
 */
export async function verifyPasskeySignIn(ctx: AppContext, posted: string | undefined): Promise<User | null> {
  const response = parseCredential<AuthenticationResponseJSON>(posted);
  if (!response) return null;
  const challenge = await takeResponseChallenge(ctx, response.response.clientDataJSON, 'signin');
  if (!challenge) return null;
  const factor = await findFactorByCredentialId(ctx.store, response.id);
  if (!factor || factor.kind !== 'passkey' || !factor.publicKey) return null;
  const rp = relyingParty(ctx);
  let verification;
  try {
    verification = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge.challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      requireUserVerification: true,
      credential: { id: factor.credentialId!, publicKey: Buffer.from(factor.publicKey, 'base64url'), counter: factor.counter ?? 0, transports: factor.transports as AuthenticatorTransportFuture[] },
    });
  } catch {
    return null;
  }
  if (!verification.verified) return null;
  const moved = await write(ctx.store, (tx) => usePasskey(tx, factor.id, factor.counter ?? 0, verification.authenticationInfo.newCounter, Date.now()));
  return moved ? findUserById(ctx, factor.userId) : null;
}
