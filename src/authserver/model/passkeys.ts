import type {
  AuthenticationResponseJSON,
  AuthenticatorTransportFuture,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import ipaddr from 'ipaddr.js';
import type { AppContext } from '../../contract/context.js';
import { InvalidInput } from '../../contract/errors.js';
import { constantTimeEqual, newTimeOrderedId, randomSecret, sha256 } from '../../platform/crypto/secrets.js';
import { write } from '../../platform/store/write-path.js';
import { countTotpFailure, findFactorByCredentialId, listFactorsOfUser, markChallengeUsed, usePasskey } from '../store/factors.js';
import { addFactor } from './factors.js';
import { findUserById, type User } from './users.js';

// @simplewebauthn/server (with its X.509 and CBOR toolkits, some 350 modules) is loaded at the first
// passkey ceremony, not at start-up: it was a fifth of the CPU time of every `serve` and CLI start.
let webauthnModule: Promise<typeof import('@simplewebauthn/server')> | undefined;
const webauthn = () => (webauthnModule ??= import('@simplewebauthn/server'));

// Passkeys (WebAuthn, docs/oauth.md, Second factors), checked by @simplewebauthn/server:
// registered on the account page, used on the login page (discoverable credentials: no user name
// first). A passkey sign-in is both factors at once (something held, unlocked by the user), so it
// satisfies `auth.mfa`. Challenges are signed with the server's key (any instance can finish a
// ceremony another began), good for 5 minutes, and used once (recorded when a response uses one).
//
// The relying party is `server.publicUrl`'s host. Browsers refuse WebAuthn on an IP address, so a
// public URL on a loopback address (127.0.0.1, ::1) serves passkeys as `localhost` on the same port.

const CHALLENGE_SECONDS = 5 * 60;
/** Whether a URL's host is a loopback address (127.0.0.0/8, ::1, ::ffff:127.x.x.x). */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(host)) return false;
  const address = ipaddr.process(host);
  return address.range() === 'loopback';
}

/** The relying party: its ID (what options name) and the origins a response may come from. */
export function relyingParty(ctx: AppContext): { id: string; origins: string[] } {
  const url = new URL(ctx.config.publicUrl);
  if (!isLoopbackHost(url.hostname)) return { id: url.hostname, origins: [url.origin] };
  return { id: 'localhost', origins: [url.origin, `https://localhost${url.port ? `:${url.port}` : ''}`] };
}

// A challenge is made, not stored: `<random>.<expiry>.<purpose>.<user id>.<key id>.<HMAC>` (the
// server's key over the rest), as the ceremony's bytes. Rendering a page writes nothing; a response
// is checked against the MAC, the expiry, the purpose and the user, and only then recorded as used
// (webauthn_challenges: its hash, until it expires), so that it signs in once.
const CHALLENGE = /^([A-Za-z0-9_-]{22})\.(\d{1,16})\.(register|signin)\.([A-Za-z0-9-]{0,64})\.([A-Za-z0-9_-]{1,64})\.([A-Za-z0-9_-]{43})$/;
const challengeMessage = (random: string, expires: string, purpose: string, userId: string) => `webauthn:${random}:${expires}:${purpose}:${userId}`;

async function makeChallenge(ctx: AppContext, purpose: 'register' | 'signin', userId: string | null): Promise<string> {
  const random = randomSecret(16);
  const expires = String(Date.now() + CHALLENGE_SECONDS * 1000);
  return `${random}.${expires}.${purpose}.${userId ?? ''}.${await ctx.keys.sign(challengeMessage(random, expires, purpose, userId ?? ''))}`;
}

/** The response's challenge when we made it for this purpose, still good and not used before (now used); its user; else null. */
async function takeResponseChallenge(ctx: AppContext, clientDataJSON: string, purpose: 'register' | 'signin'): Promise<{ challenge: string; userId: string | null } | null> {
  let challenge: unknown;
  try {
    challenge = (JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8')) as { challenge?: unknown }).challenge;
  } catch {
    return null;
  }
  if (typeof challenge !== 'string' || challenge.length > 400) return null;
  const m = CHALLENGE.exec(Buffer.from(challenge, 'base64url').toString('utf8'));
  if (!m || m[3] !== purpose || Number(m[2]) <= Date.now()) return null;
  const expected = await ctx.keys.macWith(m[5], challengeMessage(m[1], m[2], m[3], m[4]));
  if (expected === null || !constantTimeEqual(m[6], expected)) return null;
  const fresh = await write(ctx.store, (tx) => markChallengeUsed(tx, { hash: sha256(challenge as string), purpose, userId: m[4] || null, expiresAt: Number(m[2]) }));
  return fresh ? { challenge, userId: m[4] || null } : null;
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
  const { generateRegistrationOptions } = await webauthn();
  const options = await generateRegistrationOptions({
    challenge: new TextEncoder().encode(await makeChallenge(ctx, 'register', user.id)),
    rpName: 'gatehouse',
    rpID: relyingParty(ctx).id,
    userName: user.username,
    userID: new TextEncoder().encode(user.id),
    attestationType: 'none',
    excludeCredentials: existing.map((f) => ({ id: f.credentialId!, transports: f.transports as AuthenticatorTransportFuture[] })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    timeout: CHALLENGE_SECONDS * 1000,
  });
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
  const { verifyRegistrationResponse } = await webauthn();
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
  const stored = addFactor(
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
      failures: 0,
    },
    actor,
  );
  // Two registrations of one credential racing: the unique credential id lets one in.
  return stored.catch(async (e: unknown) => {
    if (await findFactorByCredentialId(ctx.store, credential.id)) throw refused('this passkey is registered already');
    throw e;
  });
}

/** Options for signing in with any passkey of this site (discoverable: no user name first). */
export async function passkeySignInOptions(ctx: AppContext): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const { generateAuthenticationOptions } = await webauthn();
  return generateAuthenticationOptions({
    challenge: new TextEncoder().encode(await makeChallenge(ctx, 'signin', null)),
    rpID: relyingParty(ctx).id,
    userVerification: 'required',
    timeout: CHALLENGE_SECONDS * 1000,
  });
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
  // WebAuthn §7.2: the user handle, when the authenticator returns one, is the credential's user's.
  const handle = response.response.userHandle;
  if (handle !== undefined && handle !== Buffer.from(factor.userId).toString('base64url')) return null;
  const rp = relyingParty(ctx);
  const { verifyAuthenticationResponse } = await webauthn();
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
  const moved = await write(ctx.store, async (tx) => {
    if (!(await usePasskey(tx, factor.id, factor.counter ?? 0, verification.authenticationInfo.newCounter, Date.now()))) return false;
    await countTotpFailure(tx, factor.userId, true); // a sign-in with both factors clears the count of wrong app codes
    return true;
  });
  return moved ? findUserById(ctx, factor.userId) : null;
}
