import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { checkDpopProof, dpopHeader, ProofRefused } from '../../contract/dpop.js';
import { InvalidDpopProof } from '../../platform/http/errors.js';
import type { AuthenticatedClient } from './client-auth.js';
import type { RequestingClient } from '../tokens.js';

// The token endpoint's DPoP step (RFC 9449 §5): a request with a proof has it checked for
// POST {auth_url}/token, and the client goes on to its grant carrying the proof's key
// (`proofKey`), which issueTokens binds every token of the answer to. A client registered
// `dpop_bound_access_tokens` must send one.

export async function proofOfPossession(ctx: AppContext, request: FastifyRequest, caller: AuthenticatedClient): Promise<AuthenticatedClient> {
  let proof: string | null;
  try {
    proof = dpopHeader(request);
    if (proof === null) {
      if (caller.client.dpopBound) throw new InvalidDpopProof('This client must send a DPoP proof with its token requests', { dpop: 'is missing' });
      return caller;
    }
    if (caller.client.tokenType === 'mac') throw new InvalidDpopProof('This client is registered for MAC tokens, which cannot be bound with DPoP', { dpop: 'not for a MAC client' });
    const { jkt } = await checkDpopProof(ctx, request, proof, `${ctx.config.authUrl}/token`);
    const client: RequestingClient = { ...caller.client, proofKey: jkt };
    return { ...caller, client };
  } catch (e) {
    if (e instanceof ProofRefused) throw new InvalidDpopProof(`Invalid DPoP proof: ${e.message}`, { dpop: e.message });
    throw e;
  }
}
