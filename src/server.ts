import { Redis } from 'ioredis';
import type { FastifyInstance } from 'fastify';
import { withListeningPort, type Config } from './config/load.js';
import type { AppContext } from './context.js';
import { openStore } from './store/dialect.js';
import { migrateCore } from './store/migrations.js';
import { syncCollectionTables } from './store/collections.js';
import { buildCollections } from './resources/model.js';
import { loadCertificate } from './http/tls.js';
import { buildApp } from './http/app.js';
import { KeyRing } from './security/keys.js';
import { startSweeper } from './store/sweeper.js';
import { listenForRevocations } from './access/revocation-notices.js';
import { ensureDemoDeployment } from './oauth/demo.js';

/** Opens the stores and brings the database up to date: what every command needs. */
export async function openContext(config: Config): Promise<AppContext> {
  const store = await openStore(config.storage.database);
  try {
    const collections = buildCollections(config.collections);
    await store.withMigrationLock(async () => {
      await migrateCore(store);
      await syncCollectionTables(store, collections);
    });
    const redis = config.storage.redis
      ? new Redis(config.storage.redis, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false })
      : null;
    if (redis) redis.on('error', () => undefined); // reported by /health; ioredis reconnects by itself
    const keys = new KeyRing(store);
    await keys.refresh();
    return { config, store, redis, collections, keys };
  } catch (e) {
    await store.close();
    throw e;
  }
}

export async function closeContext(ctx: AppContext): Promise<void> {
  await ctx.store.close();
  if (ctx.redis) await ctx.redis.quit().catch(() => ctx.redis?.disconnect());
}

export interface RunningServer {
  app: FastifyInstance;
  ctx: AppContext;
  close(): Promise<void>;
}

export async function startServer(config: Config, out: (line: string) => void = (l) => process.stdout.write(l + '\n')): Promise<RunningServer> {
  const ctx = await openContext(config);
  const cert = await loadCertificate(config);
  const app = await buildApp(ctx, cert);
  await app.listen({ port: config.server.port, host: config.server.host, listenTextResolver: (a) => `listening on ${a.replace(/^http:/, 'https:')}` });
  const address = app.server.address();
  if (address && typeof address === 'object') Object.assign(ctx.config, withListeningPort(ctx.config, address.port));
  const c = ctx.config;
  const demoLines = c.auth.demo && c.servesAuth ? await ensureDemoDeployment(ctx) : [];

  const lines = [`gatehouse listening on ${c.publicUrl}`];
  if (c.servesResources) lines.push(`  resource API   ${c.publicUrl}/v${c.api.version}  (OpenAPI: ${c.publicUrl}/v${c.api.version}/openapi.json)`);
  lines.push(`  auth server    ${c.authUrl}${c.servesAuth ? '' : '  (separate process)'}`);
  lines.push(`  role           ${c.role}`);
  lines.push(`  database       ${describeDatabase(c.storage.database)}${c.storage.redis ? `, redis ${redact(c.storage.redis)}` : ''}`);
  lines.push(`  data dir       ${c.dataDir}`);
  lines.push(`  config         ${c.file}`);
  lines.push(`  certificate    ${cert.source}${cert.created ? ' (self-signed, created now)' : ''}`);
  // One write, so that whoever reads the banner sees it whole.
  out([...lines, ...demoLines].join('\n'));

  ctx.store.runHousekeepingInBackground((message) => app.log.warn(message));
  const stopNotices = listenForRevocations(ctx, (message) => app.log.warn(message));
  const stopSweeper = startSweeper(ctx, app.log);
  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      stopSweeper();
      await stopNotices();
      await app.close();
      await closeContext(ctx);
    })());
  return { app, ctx, close };
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):([^@/]+)@/, '//$1:***@');
}

function describeDatabase(url: string): string {
  return url.startsWith('sqlite:') ? `SQLite ${url.slice(7)}` : `PostgreSQL ${redact(url)}`;
}
