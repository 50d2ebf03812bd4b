import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { withListeningPort, type Config } from '../platform/config/load.js';
import type { AppContext } from '../contract/context.js';
import { loadCertificate, type Certificate } from '../platform/http/tls.js';
import { checkSealingKey } from '../platform/crypto/sealed.js';
import { buildApp } from './app.js';
import { closeContext, openContext } from './context.js';
import { startSweeper } from './sweeper.js';
import { boundHeapGrowth } from './heap.js';
import { listenForRevocations } from '../contract/revocation-notices.js';
import { watchRedis } from '../contract/redis-state.js';
import { ensureDemoDeployment } from './demo.js';
import type { ServerMetrics } from './metrics.js';
import { eventBus } from '../contract/event-bus.js';
import { WebhookDispatcher } from '../webhooks/delivery.js';
import { webhookProblems } from '../webhooks/webhooks.js';
import { describeDatabase, redactPassword } from '../platform/store/open-store.js';
import { MailDispatcher } from '../platform/mail/dispatcher.js';
import { describeMailTransport, type MailSettings } from '../platform/mail/transport.js';

export interface RunningServer {
  app: FastifyInstance;
  ctx: AppContext;
  close(): Promise<void>;
}

type Out = (line: string) => void;
const stdout: Out = (l) => process.stdout.write(l + '\n');

/**
 * Starts gatehouse. With port 0 a free port is chosen first, so that the config (publicUrl
 * included) is settled before the app is built from it and never changes afterwards.
 */
export async function startServer(config: Config, out: Out = stdout): Promise<RunningServer> {
  const heapGrowth = boundHeapGrowth();
  for (let attempt = 1; ; attempt++) {
    const picked = config.server.port === 0 ? await freePort(config.server.host) : null;
    const settled = picked === null ? config : { ...withListeningPort(config, picked), server: { ...config.server, port: picked } };
    try {
      return await start(settled, out, heapGrowth);
    } catch (e) {
      // Another process took the port between the choice and the listen: choose again.
      if (picked !== null && (e as NodeJS.ErrnoException).code === 'EADDRINUSE' && attempt < 5) continue;
      throw e;
    }
  }
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

async function start(config: Config, out: Out, heapGrowth: number | null): Promise<RunningServer> {
  // The collections' stored records against the config: safe changes are taken, the rest stop the start (exit 2).
  const schemaLines: string[] = [];
  const ctx = await openContext(config, config.servesResources ? { adoptSchema: schemaLines } : { resourceTables: false });
  let app: FastifyInstance | null = null;
  let metrics: ServerMetrics | null = null;
  let cert: Certificate;
  try {
    // Secrets sealed under another key cannot be opened here: refuse now, not at the first sign-in.
    await checkSealingKey(ctx.store, ctx.sealer);
    cert = await loadCertificate(config);
    // prom-client is loaded only when metrics are served.
    if (config.metrics.port !== null) metrics = new (await import('./metrics.js')).ServerMetrics(ctx);
    app = await buildApp(ctx, cert, { metrics });
    await app.listen({ port: config.server.port, host: config.server.host, listenTextResolver: (a) => `listening on ${a.replace(/^http:/, 'https:')}` });
    if (metrics) await metrics.listen(config.metrics.host, config.metrics.port!);
  } catch (e) {
    await metrics?.close();
    await app?.close();
    await closeContext(ctx);
    throw e;
  }
  return announce(ctx, app, cert, metrics, out, heapGrowth, schemaLines);
}

async function announce(
  ctx: AppContext,
  app: FastifyInstance,
  cert: Certificate,
  metrics: ServerMetrics | null,
  out: Out,
  heapGrowth: number | null,
  schemaLines: string[],
): Promise<RunningServer> {
  const c = ctx.config;
  const demoLines = c.auth.demo && c.servesAuth ? await ensureDemoDeployment(ctx) : [];

  // Before the banner, so that they come first.
  for (const line of schemaLines) app.log.info(line);
  for (const line of await webhookProblems(ctx)) app.log.warn(line);

  const lines = [`gatehouse listening on ${c.publicUrl}`];
  if (c.servesResources) lines.push(`  resource API   ${c.publicUrl}/v${c.api.version}  (OpenAPI: ${c.publicUrl}/v${c.api.version}/openapi.json)`);
  lines.push(`  auth server    ${c.authUrl}${c.servesAuth ? '' : '  (separate process)'}`);
  if (c.servesAuth) lines.push(`  admin          ${c.publicUrl}/admin  (API: ${c.publicUrl}/admin/v1, the admin scope)`);
  if (c.servesAuth) lines.push(`  mail           ${describeMailTransport(mailSettings(c))}`);
  lines.push(`  role           ${c.role}`);
  lines.push(`  database       ${describeDatabase(c.storage.database)}${c.storage.redis ? `, redis ${redactPassword(c.storage.redis)}` : ''}`);
  lines.push(`  data dir       ${c.dataDir}`);
  lines.push(`  config         ${c.file}`);
  lines.push(`  certificate    ${cert.source}${cert.created ? ' (self-signed, created now)' : ''}`);
  if (metrics) lines.push(`  metrics        http://${hostForUrl(c.metrics.host)}:${c.metrics.port}/metrics`);
  lines.push(`  heap growth    ${heapGrowth === null ? "as node's --heap-growing-percent sets it" : `${heapGrowth}% (V8's --heap-growing-percent; docs/deployment.md, Memory)`}`);
  // One write, so that whoever reads the banner sees it whole.
  out([...lines, ...demoLines].join('\n'));

  ctx.store.announceServing();
  ctx.store.runHousekeepingInBackground((message) => app.log.warn(message));
  const stopNotices = listenForRevocations(ctx, (message) => app.log.warn(message));
  const redisWatch = watchRedis(ctx, (m) => app.log.warn(m));
  const stopSweeper = startSweeper(ctx, app.log);
  const bus = eventBus(ctx);
  bus.start((message) => app.log.warn(message));
  const webhooks = new WebhookDispatcher(ctx, (message) => app.log.warn(message));
  await webhooks.start().catch((e: Error) => app.log.warn(`webhook delivery not started: ${e.message}`));
  // Mail is queued by the authorization server's pages and sent where it runs.
  const mail = c.servesAuth
    ? new MailDispatcher({ store: ctx.store, settings: mailSettings(c), sealer: ctx.sealer, info: (line) => app.log.info(line), warn: (line) => app.log.warn(line) })
    : null;
  mail?.start();
  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      stopSweeper();
      await webhooks.stop();
      await mail?.stop();
      await bus.stop(); // ends the event streams and long polls: they would hold the server open
      await stopNotices();
      redisWatch.stop();
      await app.close();
      await metrics?.close();
      await closeContext(ctx);
    })());
  return { app, ctx, close };
}

function mailSettings(c: Config): MailSettings {
  return { ...c.email, dataDir: c.dataDir };
}

function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

