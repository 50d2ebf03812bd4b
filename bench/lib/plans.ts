// EXPLAIN of the statements a list request really runs: Records.list (src/api/records.ts) over a
// Kysely that records every statement, on the server's own database (read beside the running
// server), then the store's EXPLAIN of each. Used by BENCH_SCALE (bench/scale.ts).
import { tmpdir } from 'node:os';
import { Kysely, PostgresDialect, SqliteDialect, type CompiledQuery } from 'kysely';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { loadConfig } from '../../src/platform/config/load.js';
import { openStore } from '../../src/platform/store/open-store.js';
import { KeyRing } from '../../src/platform/crypto/keys.js';
import { buildCollections } from '../../src/contract/collections.js';
import { Links } from '../../src/api/links.js';
import { Records } from '../../src/api/records.js';
import { parseListQuery } from '../../src/api/query.js';
import type { AppContext } from '../../src/contract/context.js';
import type { Caller } from '../../src/contract/caller.js';

export interface QueryPlan {
  label: string;
  sql: string;
  plan: string[];
}

/** The plans of each list request (path and query of /v1/<collection>?…) made by `subject`. */
export async function listPlans(configFile: string, databaseUrl: string, subject: string, requests: { label: string; target: string }[]): Promise<QueryPlan[]> {
  const config = loadConfig({ file: configFile, dataDir: tmpdir(), env: {} });
  const collections = buildCollections(config.collections);
  const store = await openStore(databaseUrl);
  const captured: CompiledQuery[] = [];
  const log = (event: { query: CompiledQuery }) => void captured.push(event.query);
  const sqlite = databaseUrl.startsWith('sqlite:') ? new BetterSqlite3(databaseUrl.slice('sqlite:'.length), { readonly: true }) : null;
  const pool = sqlite ? null : new pg.Pool({ connectionString: databaseUrl, max: 1 });
  const logged = new Kysely<any>({ dialect: sqlite ? new SqliteDialect({ database: sqlite }) : new PostgresDialect({ pool: pool! }), log });
  try {
    const ctx = { config, store: { ...store, db: logged }, redis: null, collections, keys: new KeyRing(store) } as unknown as AppContext;
    const records = new Records(ctx, new Links(() => 'https://127.0.0.1', config.api.version, collections));
    const caller: Caller = { subject, clientId: subject, scopes: new Set(), tokenHash: '', grantId: '', tokenType: 'bearer', expiresAt: Number.MAX_SAFE_INTEGER, origins: [] };
    const out: QueryPlan[] = [];
    for (const { label, target } of requests) {
      const url = new URL(target, 'https://x');
      const model = collections.get(url.pathname.split('/')[2])!;
      captured.length = 0;
      const query = parseListQuery(model, Object.fromEntries(url.searchParams), { defaultLimit: config.api.defaultLimit, maxLimit: config.api.maxLimit });
      await records.list({ model, parentId: null }, caller, query);
      for (const q of captured.filter((c) => /^select/i.test(c.sql)))
        out.push({ label: `${label} (${/count\(\*\)/i.test(q.sql) ? 'count' : 'page'})`, sql: q.sql, plan: await store.explain(q) });
    }
    return out;
  } finally {
    await logged.destroy();
    await store.close();
  }
}
