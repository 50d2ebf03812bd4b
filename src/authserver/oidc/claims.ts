
// The identity scopes of OpenID Connect (Core §5.4) and the claims each one releases, in the one
// place both the ID token and userinfo read. They join the deployment's collection scopes; the
// consent page shows them as "Your identity".

export const OPENID_SCOPE = 'openid';
export const IDENTITY_SCOPES = [OPENID_SCOPE, 'profile', 'email'] as const;

const CLAIMS_OF_SCOPE = {
  profile: ['preferred_username', 'name', 'updated_at'],
  email: ['email', 'email_verified'],
} as const;

/** Every claim gatehouse can release (the discovery document's `claims_supported`). */
export const CLAIMS_SUPPORTED = ['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'at_hash', 'azp', 'sid', 'amr', ...CLAIMS_OF_SCOPE.profile, ...CLAIMS_OF_SCOPE.email];

/** What each identity scope allows, in words (the consent page). */
export const IDENTITY_LABELS: Record<(typeof IDENTITY_SCOPES)[number], string> = {
  openid: 'Know who you are: an identifier of your account that stays the same',
  profile: 'Your name and user name',
  email: 'Your e-mail address, and whether it is verified',
};

export function isIdentityScope(scope: string): boolean {
  return (IDENTITY_SCOPES as readonly string[]).includes(scope);
}

/** What the claims are made of: a user's profile (model/users.ts `User`). */
export interface ClaimSource {
  username: string;
  name: string | null;
  email: string | null;
  emailVerified: boolean;
  createdAt: number;
  updatedAt: number | null;
}

/** The user's claims released by `scopes` (besides `sub`); a claim the user has no value for is left out. */
export function userClaims(user: ClaimSource, scopes: ReadonlySet<string> | readonly string[]): Record<string, string | number | boolean> {
  const has = (s: string) => ('has' in scopes ? scopes.has(s) : scopes.includes(s));
  const out: Record<string, string | number | boolean> = {};
  if (has('profile')) {
    out.preferred_username = user.username;
    if (user.name !== null) out.name = user.name;
    out.updated_at = Math.floor((user.updatedAt ?? user.createdAt) / 1000);
  }
  if (has('email') && user.email !== null) {
    out.email = user.email;
    out.email_verified = user.emailVerified;
  }
  return out;
}
