import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { AppContext } from '../contract/context.js';
import { randomSecret } from '../platform/crypto/secrets.js';
import { anyClientRegistered, registerClient } from '../authserver/model/clients.js';
import { anyUserRegistered, createUser } from '../authserver/model/users.js';

// `npm start` on an empty data dir: a demo user and a demo client, and the two curl commands
// that show the whole mission (get a token, list /v1/zoos with it). The credentials are kept in
// <dataDir>/demo-credentials.json (mode 0600) so later starts can point there instead of
// printing secrets again.

export const DEMO_USER = 'demo';
export const DEMO_CLIENT = 'demo-app';
export const DEMO_REDIRECT_URI = 'http://127.0.0.1:8080/callback';

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

function commands(ctx: AppContext, c: Pick<DemoCredentials, 'username' | 'password' | 'client_id' | 'client_secret'>) {
  const { config } = ctx;
  const cacert = config.server.tls ? '' : `--cacert ${path.join(config.dataDir, 'tls', 'cert.pem')} `;
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
  try {
    await createUser(ctx, DEMO_USER, password);
  } catch {
    return []; // another instance created it at the same moment
  }
  const { secret } = await registerClient(ctx, {
    id: DEMO_CLIENT,
    name: 'Demo app',
    public: false,
    redirectUris: [DEMO_REDIRECT_URI],
    grantTypes: ['authorization_code', 'password', 'client_credentials', 'refresh_token'],
    scope: null,
    tokenType: 'bearer',
    origins: [],
  });
  const base = { username: DEMO_USER, password, client_id: DEMO_CLIENT, client_secret: secret! };
  const saved: DemoCredentials = { ...base, redirect_uri: DEMO_REDIRECT_URI, ...commands(ctx, base) };
  writeFileSync(file, JSON.stringify(saved, null, 2) + '\n', { mode: 0o600 });
  return [
    '',
    'Demo deployment created (saved in ' + file + '):',
    `  user           ${DEMO_USER}   password ${password}`,
    `  client         ${DEMO_CLIENT}   secret ${secret}   (grants: authorization_code, password, client_credentials, refresh_token)`,
    '  get a token:',
    `    ${saved.get_token}`,
    '  list the zoos with it:',
    `    ${saved.list_zoos}`,
    `  or sign in in a browser: ${ctx.config.authUrl}/authorize?response_type=code&client_id=${DEMO_CLIENT}&state=xyz`,
  ];
}
