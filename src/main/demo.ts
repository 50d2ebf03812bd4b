import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../contract/context.js';
import type { Caller } from '../contract/caller.js';
import { randomSecret } from '../platform/crypto/secrets.js';
import { routeMethods } from '../platform/http/routes.js';
import { anyClientRegistered, grantEnabled, registerClient } from '../authserver/model/clients.js';
import { anyUserRegistered, createUser } from '../authserver/model/users.js';
import { sendPage } from '../platform/http/html/index.js';
import { demoCallbackPage } from './demo-page.js';
import { Records } from '../api/records.js';
import { Links } from '../api/links.js';

// `npm start` on an empty data dir: a demo user and a demo client, and the two curl commands
// that show the whole mission (get a token, list /v1/zoos with it). The credentials are kept in
// <dataDir>/demo-credentials.json (mode 0600) so later starts can point there instead of
// printing secrets again.

export const DEMO_USER = 'demo';
export const DEMO_CLIENT = 'demo-app';
/** The demo client lands on a page of gatehouse itself (served only in the demo deployment). */
export const DEMO_CALLBACK_PATH = '/demo/callback';
const demoRedirectUri = (ctx: AppContext) => `${ctx.config.publicUrl}${DEMO_CALLBACK_PATH}`;

interface DemoCredentials {
  username: string;
  password: string;
  client_id: string;
  client_secret: string;
  redirect_uri: string;
  get_token: string;
  list_zoos: string;
}

export function demoCredentialsFile(ctx: AppContext): string {
  return path.join(ctx.config.dataDir, 'demo-credentials.json');
}

const cacertOption = (ctx: AppContext) => (ctx.config.server.tls ? '' : `--cacert ${path.join(ctx.config.dataDir, 'tls', 'cert.pem')} `);

function commands(ctx: AppContext, c: Pick<DemoCredentials, 'username' | 'password' | 'client_id' | 'client_secret'>) {
  const { config } = ctx;
  const cacert = cacertOption(ctx);
  return {
    get_token:
      `TOKEN=$(curl -s ${cacert}-u ${c.client_id}:${c.client_secret} -d grant_type=password ` +
      `-d username=${c.username} -d password=${c.password} ${config.authUrl}/token | sed -E 's/.*"access_token":"([^"]+)".*/\\1/')`,
    list_zoos: `curl ${cacert}-H "Authorization: Bearer $TOKEN" ${config.publicUrl}/v${config.api.version}/zoos`,
  };
}

export async function ensureDemoDeployment(ctx: AppContext): Promise<string[]> {
  const file = demoCredentialsFile(ctx);
  if ((await anyUserRegistered(ctx)) || (await anyClientRegistered(ctx))) {
    if (!existsSync(file)) return [];
    try {
      const saved = JSON.parse(readFileSync(file, 'utf8')) as DemoCredentials;
      return [`  demo           user "${saved.username}", client "${saved.client_id}": credentials and ready-to-paste curl commands in ${file}`];
    } catch {
      return [];
    }
  }

  const password = randomSecret(12);
  let userId: string;
  try {
    userId = (await createUser(ctx, DEMO_USER, password)).id;
  } catch {
    return []; // another instance created it at the same moment
  }
  const redirectUri = demoRedirectUri(ctx);
  // Only the grants the deployment offers (auth.grants): registering for another is refused.
  const grants = (['authorization_code', 'password', 'client_credentials', 'refresh_token'] as const).filter((g) => grantEnabled(ctx.config, g));
  const { secret } = await registerClient(ctx, {
    id: DEMO_CLIENT,
    name: 'Demo app',
    verified: true,
    public: false,
    redirectUris: [redirectUri],
    grantTypes: [...grants],
    scope: null,
    tokenType: 'bearer',
    origins: [],
  });
  const base = { username: DEMO_USER, password, client_id: DEMO_CLIENT, client_secret: secret! };
  const saved: DemoCredentials = { ...base, redirect_uri: redirectUri, ...commands(ctx, base) };
  writeFileSync(file, JSON.stringify(saved, null, 2) + '\n', { mode: 0o600 });
  const seeded = await seedDemoRecords(ctx, `user:${userId}`);
  return [
    '',
    'Demo deployment created (saved in ' + file + '):',
    `  user           ${DEMO_USER}   password ${password}`,
    `  client         ${DEMO_CLIENT}   secret ${secret}   (grants: ${grants.join(', ')})`,
    '  get a token:',
    `    ${saved.get_token}`,
    '  list the zoos with it:',
    `    ${saved.list_zoos}`,
    ...(seeded ? [`  the demo user owns ${seeded}`] : []),
    // prompt=consent: the password grants above leave a grant that would skip the page.
    `  or sign in in a browser: ${ctx.config.authUrl}/authorize?response_type=code&client_id=${DEMO_CLIENT}&state=xyz&prompt=consent`,
  ];
}

const DEMO_ZOOS = [
  { zoo: { name: 'Tiergarten', city: 'Berlin', founded: 1844 }, animals: [{ name: 'Knut', species: 'polar bear' }, { name: 'Bao Bao', species: 'giant panda' }] },
  { zoo: { name: 'Schönbrunn', city: 'Vienna', founded: 1752 }, animals: [{ name: 'Fu Long', species: 'giant panda' }] },
  { zoo: { name: 'Zoo Leipzig', city: 'Leipzig', founded: 1878 }, animals: [{ name: 'Pablo', species: 'jaguar' }, { name: 'Kiri', species: 'giraffe' }] },
];

/**
 * A few zoos with animals for the demo user, through the records service (validated, the same
 * write path as the API), so the banner's curl shows data. Skipped when the config has no such
 * collections (a demo deployment with other collections): null then.
 */
async function seedDemoRecords(ctx: AppContext, subject: string): Promise<string | null> {
  const zoos = ctx.collections.get('zoos');
  const animals = ctx.collections.get('animals');
  if (!zoos || !ctx.config.servesResources) return null;
  const records = new Records(ctx, new Links(() => ctx.config.publicUrl, ctx.config.api.version, ctx.collections));
  const caller: Caller = { subject, clientId: DEMO_CLIENT, scopes: new Set(ctx.collections.scopes), tokenHash: '', grantId: null, tokenType: 'bearer', expiresAt: Number.MAX_SAFE_INTEGER, origins: [] };
  let animalCount = 0;
  try {
    for (const { zoo, animals: inZoo } of DEMO_ZOOS) {
      const created = await records.create({ model: zoos, parentId: null }, caller, zoo);
      if (animals?.parent?.collection !== 'zoos') continue;
      for (const animal of inZoo) {
        await records.create({ model: animals, parentId: created.id }, caller, animal);
        animalCount++;
      }
    }
  } catch {
    return null; // the deployment's schemas differ from the demo's
  }
  return `${DEMO_ZOOS.length} zoos${animalCount ? ` and ${animalCount} animals` : ''}`;
}

/** GET {base_url}/demo/callback (demo deployment only): the code, the state and how to redeem it. */
export function registerDemoCallback(app: FastifyInstance, ctx: AppContext): void {
  routeMethods(app, DEMO_CALLBACK_PATH, {
    GET: async (request, reply) => {
      const q = request.query as Record<string, unknown>;
      const text = (k: string) => (typeof q[k] === 'string' ? (q[k] as string) : undefined);
      let saved: Partial<DemoCredentials> = {};
      try {
        saved = JSON.parse(readFileSync(demoCredentialsFile(ctx), 'utf8')) as DemoCredentials;
      } catch {
        // not this data dir's demo: placeholders below
      }
      const clientId = saved.client_id ?? DEMO_CLIENT;
      // Anyone may open this page: it names the 0600 file that holds the client's secret and lets
      // the command read it from there, and never shows the secret itself.
      const file = demoCredentialsFile(ctx);
      const code = text('code');
      const view = demoCallbackPage({
        code,
        state: text('state'),
        error: text('error') ?? (code ? undefined : 'no_code'),
        errorDescription: text('error_description') ?? (code ? undefined : 'this page was opened without ?code='),
        secretFile: file,
        exchange:
          `CLIENT_SECRET=$(sed -nE 's/.*"client_secret": "([^"]+)".*/\\1/p' ${file})\n` +
          `TOKEN=$(curl -s ${cacertOption(ctx)}-u "${clientId}:$CLIENT_SECRET" -d grant_type=authorization_code ` +
          `-d code=${code ?? ''} -d redirect_uri=${saved.redirect_uri ?? demoRedirectUri(ctx)} ${ctx.config.authUrl}/token | sed -E 's/.*"access_token":"([^"]+)".*/\\1/')`,
        listZoos: `curl ${cacertOption(ctx)}-H "Authorization: Bearer $TOKEN" ${ctx.config.publicUrl}/v${ctx.config.api.version}/zoos`,
      });
      return sendPage(reply, { kind: 'card', basePath: ctx.config.basePath, ...view });
    },
  }, { config: { html: true } });
}
