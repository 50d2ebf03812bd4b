// The token-endpoint peer: node-oidc-provider 9 (panva) over node:https with the same
// certificate, one confidential client allowed the client_credentials grant, its default
// in-memory adapter and opaque access tokens. The issuer needs the port, so the server listens
// first and hands requests to the provider once it exists.
// env: BENCH_CERT, BENCH_KEY, BENCH_CLIENT_ID, BENCH_CLIENT_SECRET.
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Provider from 'oidc-provider';

let callback: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
  res.writeHead(503).end();
};
const server = https.createServer({ cert: readFileSync(process.env.BENCH_CERT!), key: readFileSync(process.env.BENCH_KEY!) }, (req, res) =>
  callback(req, res),
);
server.keepAliveTimeout = 72_000;

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  const issuer = `https://127.0.0.1:${port}`;
  const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: process.env.BENCH_CLIENT_ID ?? 'bench',
        client_secret: process.env.BENCH_CLIENT_SECRET ?? 'bench-secret',
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    features: { clientCredentials: { enabled: true }, devInteractions: { enabled: false } },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    jwks: { keys: [{ ...signingKey, use: 'sig', alg: 'RS256', kid: 'bench' }] },
  });
  callback = provider.callback() as typeof callback;
  console.log(`listening on ${issuer}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
