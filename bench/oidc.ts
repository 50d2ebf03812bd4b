// What an ID token costs (docs/benchmarks.md, "The code flow with and without an ID token"): the
// bench's gatehouse (startGatehouse), a user signed in once in a cookie jar, a confidential client
// that consented once (remembered consent), then BENCH_OIDC_FLOWS code flows per variant, one at a
// time: GET /authorize (302 with a code) and POST /token. Measured: the server's CPU per flow
// (/proc/<pid>/stat), for `zoos:read` alone, `openid zoos:read` (RS256) and `openid zoos:read` for
// a client registered ES256, in rounds that alternate the variants.
//   npm run bench:oidc
import { spawnSync } from 'node:child_process';
import { fetch } from 'undici';
import { CLI, ROOT, basicAuth, startGatehouse, type Gatehouse } from './lib/gatehouse.js';
import { cpuSeconds } from './lib/load.js';
import { cleanUp, installSignalHandlers, makeTempDir } from './lib/processes.js';

const FLOWS = Number(process.env.BENCH_OIDC_FLOWS ?? 400);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CB = 'https://rp.example/callback';
const PASSWORD = 'bench-user-password';
const SECRET = 'bench-rp-secret-0123456789abcdefghijklmnop';

function cli(g: Gatehouse, args: string[]): void {
  const r = spawnSync(process.execPath, [CLI, ...args, '--config', g.configFile, '--data-dir', g.dataDir], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, LOG_LEVEL: 'warn' } });
  if (r.status !== 0) throw new Error(`gatehouse ${args.join(' ')}: ${r.stderr || r.stdout}`);
}

async function call(g: Gatehouse, path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  const res = await fetch(`${g.server.url}${path}`, { ...init, redirect: 'manual', dispatcher: g.agent });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const cookies = new Map<string, string>();
const cookieHeader = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
function keep(headers: Headers) {
  for (const line of headers.getSetCookie()) {
    const [pair] = line.split(';');
    const eq = pair.indexOf('=');
    cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
}
const field = (html: string, name: string) => {
  const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (!m) throw new Error(`no ${name} field`);
  return m[1].replaceAll('&#61;', '=').replaceAll('&#38;', '&').replaceAll('&amp;', '&').replaceAll('&quot;', '"');
};
const authorizePath = (clientId: string, scope: string) => `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: CB, scope, state: 's' })}`;

/** Signs in and consents once, so that later requests of this client and scope get a code at once. */
async function consentOnce(g: Gatehouse, clientId: string, scope: string) {
  let page = await call(g, authorizePath(clientId, scope), { headers: { cookie: cookieHeader(), accept: 'text/html' } });
  keep(page.headers);
  const form = (extra: Record<string, string>) =>
    call(g, '/oauth/authorize', {
      method: 'POST',
      headers: { cookie: cookieHeader(), 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
      body: new URLSearchParams({ request: field(page.text, 'request'), csrf_token: field(page.text, 'csrf_token'), ...extra }).toString(),
    });
  if (page.text.includes('name="password"')) {
    const posted = await form({ step: 'login', username: 'olivia', password: PASSWORD });
    keep(posted.headers);
    page = await call(g, posted.headers.get('location')!, { headers: { cookie: cookieHeader(), accept: 'text/html' } });
    keep(page.headers);
  }
  const scopes = scope.split(' ').flatMap((s) => ['scope', s]);
  const body = new URLSearchParams({ request: field(page.text, 'request'), csrf_token: field(page.text, 'csrf_token'), step: 'consent', decision: 'allow', ttl: '3600' });
  for (let i = 0; i < scopes.length; i += 2) body.append('scope', scopes[i + 1]);
  const decided = await call(g, '/oauth/authorize', { method: 'POST', headers: { cookie: cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' }, body: body.toString() });
  await redeem(g, clientId, decided.headers.get('location')!);
}

async function redeem(g: Gatehouse, clientId: string, location: string): Promise<boolean> {
  const code = new URL(location).searchParams.get('code');
  if (!code) throw new Error(`no code: ${location}`);
  const r = await call(g, '/oauth/token', {
    method: 'POST',
    headers: { authorization: basicAuth(clientId, SECRET), 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: CB }).toString(),
  });
  if (r.status !== 200) throw new Error(`token: ${r.status} ${r.text}`);
  return JSON.parse(r.text).id_token !== undefined;
}

async function flows(g: Gatehouse, clientId: string, scope: string, n: number): Promise<{ cpuUs: number; wallUs: number; idTokens: number }> {
  const target = authorizePath(clientId, scope);
  const cpu0 = cpuSeconds(g.server.pid)!;
  const t0 = process.hrtime.bigint();
  let idTokens = 0;
  for (let i = 0; i < n; i++) {
    const r = await call(g, target, { headers: { cookie: cookieHeader() } });
    if (r.status !== 302) throw new Error(`authorize: ${r.status}`);
    if (await redeem(g, clientId, r.headers.get('location')!)) idTokens++;
  }
  const wall = Number(process.hrtime.bigint() - t0) / 1e3;
  return { cpuUs: ((cpuSeconds(g.server.pid)! - cpu0) * 1e6) / n, wallUs: wall / n, idTokens };
}

installSignalHandlers();
const workDir = makeTempDir('gatehouse-bench-oidc-');
try {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const g = await startGatehouse(workDir, log);
  try {
    cli(g, ['user', 'add', 'olivia', '--password', PASSWORD]);
    cli(g, ['client', 'add', 'rp', '--secret', SECRET, '--grant', 'authorization_code', '--redirect-uri', CB]);
    cli(g, ['client', 'add', 'rp-es', '--secret', SECRET, '--grant', 'authorization_code', '--redirect-uri', CB, '--id-token-signed-response-alg', 'ES256']);
    const variants = [
      { name: 'code flow, zoos:read (no ID token)', client: 'rp', scope: 'zoos:read' },
      { name: 'code flow, openid zoos:read (RS256 ID token)', client: 'rp', scope: 'openid zoos:read' },
      { name: 'code flow, openid zoos:read (ES256 ID token)', client: 'rp-es', scope: 'openid zoos:read' },
    ];
    for (const v of variants) {
      await consentOnce(g, v.client, v.scope);
      await flows(g, v.client, v.scope, 50); // warm-up
    }
    const results = new Map<string, number[]>(variants.map((v) => [v.name, []]));
    for (let round = 0; round < ROUNDS; round++)
      for (const v of round % 2 ? [...variants].reverse() : variants) {
        const r = await flows(g, v.client, v.scope, FLOWS);
        if ((r.idTokens > 0) !== v.scope.includes('openid')) throw new Error(`${v.name}: ${r.idTokens} ID tokens`);
        results.get(v.name)!.push(r.cpuUs);
        log(`round ${round + 1} ${v.name}: ${r.cpuUs.toFixed(0)} µs CPU, ${r.wallUs.toFixed(0)} µs wall per flow`);
      }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const base = median(results.get(variants[0].name)!);
    console.log(`| Variant (${FLOWS} flows × ${ROUNDS} rounds, median) | Server CPU per flow | Beside no ID token |`);
    console.log('|---|---|---|');
    for (const v of variants) {
      const m = median(results.get(v.name)!);
      console.log(`| ${v.name} | ${m.toFixed(0)} µs | ${(m / base).toFixed(2)}× (+${(m - base).toFixed(0)} µs) |`);
    }
  } finally {
    await g.agent.close();
    await g.server.stop();
  }
} finally {
  await cleanUp();
}
