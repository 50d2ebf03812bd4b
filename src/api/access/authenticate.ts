import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { ApiError, unauthorized } from '../../platform/http/errors.js';
import type { Caller } from '../../contract/caller.js';
import { TokenVerifier } from '../../contract/active-token.js';
import { isAudienceOf, protectedResourceMetadataUrl, resourceNamed, type Resource } from '../../contract/resources.js';
import { authorizationServerIssuer } from './protected-resource.js';
import { bodyHashMatches, parseMacHeader, verifyMacRequest } from './mac.js';
import { boundRequestProblem, requestUrl } from '../../contract/dpop.js';
import { DPOP_ALGS } from '../../platform/crypto/dpop-proof.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The bodyhash a MAC signed, checked against the body once it has been read. */
    macBodyHash: string | null;
  }
}

// Who is calling: the access token of the Authorization header (Bearer, RFC 6750; DPoP, RFC 9449,
// with its proof; or MAC), verified against the token store. Any failure is a 401 with a
// WWW-Authenticate challenge that names the protected resource metadata (RFC 9728 §5.1); a
// Bearer challenge also offers DPoP and its algorithms.

export const REALM = 'gatehouse';
const FOR_ANOTHER_RESOURCE = 'the token is for another resource (its audience)';

type Scheme = 'Bearer' | 'MAC' | 'DPoP';
const DPOP_OFFER = `DPoP algs="${DPOP_ALGS.join(' ')}"`;

export class Authenticator {
  readonly tokens: TokenVerifier;
  /** The resource this server is (RFC 8707): a token for another is refused. The resource API unless told (the MCP server passes its own). */
  readonly resource: Resource;
  constructor(
    private readonly ctx: AppContext,
    resource?: Resource,
  ) {
    this.resource = resource ?? resourceNamed(ctx.config, 'api');
    this.tokens = new TokenVerifier(ctx, { issuer: () => authorizationServerIssuer(ctx.config) });
  }

  private challenge(scheme: Scheme, error?: string, description?: string): string {
    let value = `${scheme} realm="${REALM}", resource_metadata="${protectedResourceMetadataUrl(this.ctx.config, this.resource)}"`;
    if (scheme === 'DPoP') value += `, algs="${DPOP_ALGS.join(' ')}"`;
    if (error) value += `, error="${error}"`;
    if (description) value += `, error_description="${description.replace(/["\\]/g, '')}"`;
    return scheme === 'Bearer' ? `${value}, ${DPOP_OFFER}` : value;
  }

  private invalid(scheme: Scheme, description: string): ApiError {
    return unauthorized('Invalid access token', this.challenge(scheme, 'invalid_token', description), { authorization: description });
  }

  /** After parsing: a 401 when the MAC's bodyhash is not the hash of the body received. */
  checkBodyHash(request: FastifyRequest): ApiError | null {
    if (request.macBodyHash === null) return null;
    return bodyHashMatches(request.macBodyHash, request.rawBody ?? undefined, request.rawBodySha256 ?? undefined) ? null : this.invalid('MAC', 'body hash does not match the body');
  }

  /** The access token the request presented (Bearer, or a MAC's id), to check again later (a long-lived event stream). */
  presentedToken(request: FastifyRequest): string | null {
    const header = request.headers.authorization ?? '';
    const space = header.indexOf(' ');
    const scheme = header.slice(0, Math.max(space, 0)).toLowerCase();
    if (scheme === 'bearer' || scheme === 'dpop') return header.slice(space + 1).trim();
    if (scheme === 'mac') return parseMacHeader(header.slice(space + 1).trim())?.id ?? null;
    return null;
  }

  /** The caller, or the 401 to answer with. Never throws for bad credentials. */
  async identify(request: FastifyRequest): Promise<Caller | ApiError> {
    const header = request.headers.authorization;
    if (header === undefined || header === '') {
      const q = request.query as Record<string, unknown> | undefined;
      if (q && q.access_token !== undefined)
        return unauthorized('Access tokens are not accepted in the query string', this.challenge('Bearer', 'invalid_request', 'use the Authorization header'), {
          access_token: 'send the token in the Authorization header',
        });
      return unauthorized('Authentication required', this.challenge('Bearer'), { authorization: 'an access token is required' });
    }
    const space = header.indexOf(' ');
    const scheme = (space < 0 ? header : header.slice(0, space)).toLowerCase();
    const rest = space < 0 ? '' : header.slice(space + 1).trim();
    if (scheme === 'bearer') {
      if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(rest)) return this.invalid('Bearer', 'malformed bearer token');
      const token = await this.tokens.verify(rest);
      if (!token) return this.invalid('Bearer', 'the token is unknown, expired or revoked');
      if (!isAudienceOf(token.audience, this.resource)) return this.invalid('Bearer', FOR_ANOTHER_RESOURCE);
      if (token.tokenType !== 'bearer') return token.tokenType === 'dpop' ? this.invalid('DPoP', 'this token is DPoP-bound: use the DPoP scheme with a proof') : this.invalid('Bearer', 'this token must be used with the MAC scheme');
      return token;
    }
    if (scheme === 'dpop') {
      if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(rest)) return this.invalid('DPoP', 'malformed DPoP token');
      const token = await this.tokens.verify(rest);
      if (!token) return this.invalid('DPoP', 'the token is unknown, expired or revoked');
      if (!isAudienceOf(token.audience, this.resource)) return this.invalid('DPoP', FOR_ANOTHER_RESOURCE);
      if (token.tokenType !== 'dpop' || token.jkt === null) return this.invalid('DPoP', 'this token is not DPoP-bound: use the Bearer scheme');
      const problem = await boundRequestProblem(this.ctx, request, rest, token.jkt, requestUrl(this.ctx.config.publicUrl, request));
      if (problem) return unauthorized('Invalid DPoP proof', this.challenge('DPoP', 'invalid_dpop_proof', problem), { dpop: problem });
      return token;
    }
    if (scheme === 'mac') {
      const credentials = parseMacHeader(rest);
      if (!credentials) return this.invalid('MAC', 'malformed MAC credentials');
      const token = await this.tokens.verify(credentials.id);
      if (!token) return this.invalid('MAC', 'the token is unknown, expired or revoked');
      if (!isAudienceOf(token.audience, this.resource)) return this.invalid('MAC', FOR_ANOTHER_RESOURCE);
      if (token.tokenType !== 'mac') return this.invalid('MAC', 'this token is a bearer token');
      const problem = await verifyMacRequest(this.ctx, request, credentials, token);
      if (problem) return this.invalid('MAC', problem);
      if (credentials.bodyhash !== undefined) request.macBodyHash = credentials.bodyhash;
      return token;
    }
    return unauthorized('Unsupported authorization scheme', this.challenge('Bearer', 'invalid_request', 'use Bearer, DPoP or MAC'), {
      authorization: 'must use the Bearer, DPoP or MAC scheme',
    });
  }
}
