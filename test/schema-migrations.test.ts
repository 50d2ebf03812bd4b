// Changing the schema over stored records (docs/configuration.md, "Changing the schema"): the real
// server and CLI on one data dir, the config changed between starts. A change that would strand
// stored records stops `serve` (exit 2, one line per change with the field and the count); a
// declared migration, applied by `gatehouse migrate` (`--dry-run` first), makes GET, filters,
// sort, q, cursors and PATCH work in the new shape. On SQLite, and on PostgreSQL when it is there.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import pg from 'pg';
import { CLI, ROOT, createPgDatabase, pgAvailable, runCli, startServer, tempDir, testConfig, writeConfig, type Json, type TestServer } from './helpers/server.js';
import { ALL_SCOPES, asBearer, clientToken, type ApiClient } from './helpers/tokens.js';
import { until } from './helpers/wait.js';

const engines = [{ name: 'SQLite', pg: false }, ...(pgAvailable ? [{ name: 'PostgreSQL', pg: true }] : [])];

/** The demo's zoos and orders with `change` applied to a copy. */
function configWith(database: string | null, change: (c: Json) => void = () => undefined): Json {
  const config = testConfig({ api: { maxBulkItems: 10000 } });
  if (database) config.storage.database = database;
  change(config.collections);
  return config;
}

/** zoos.city renamed to town everywhere in the config, with or without `renamedFrom`. */
function renamed(c: Json, declared: boolean): void {
  const z = c.zoos;
  const { city: _city, ...rest } = z.schema.properties;
  z.schema.properties = { ...rest, town: declared ? { type: 'string', renamedFrom: 'city' } : { type: 'string' } };
  z.filters = z.filters.map((f: string) => (f === 'city' ? 'town' : f));
  z.search = z.search.map((f: string) => (f === 'city' ? 'town' : f));
  z.sort = [...z.sort, 'town'];
  z.indexes = [['town', 'founded']];
}

for (const engine of engines) {
  describe(`schema changes on ${engine.name}`, () => {
    const dir = tempDir('gatehouse-migrations-');
    let database: string | null = null;
    let dropPg: (() => Promise<void>) | null = null;
    let server: TestServer | null = null;
    let token: string;
    const ids: Record<string, string> = {};
    const etags: Record<string, string | null> = {};
    /** The config the last test left the data dir with. */
    let current: Json;

    /** Writes this config in the data dir: the next serve or CLI command reads it. */
    const use = (config: Json) => writeConfig(dir, config);
    const cli = (...args: string[]) => runCli([...args, '--config', `${dir}/gatehouse.json`, '--data-dir', dir]);
    const serve = async (config: Json): Promise<ApiClient> => {
      await server?.stop();
      use(config);
      server = await startServer({ dataDir: dir, configFile: `${dir}/gatehouse.json` });
      return asBearer(server, token);
    };
    /** A serve that must not start: its exit status and what it printed. */
    const refusedServe = (config: Json) => {
      use(config);
      return runCli(['serve', '--config', `${dir}/gatehouse.json`, '--data-dir', dir, '--port', '0']);
    };

    before(async () => {
      if (engine.pg) {
        const db = await createPgDatabase();
        database = db.url;
        dropPg = db.drop;
      }
      use(configWith(database));
      server = await startServer({ dataDir: dir, configFile: `${dir}/gatehouse.json` });
      token = await clientToken(server, 'evolve');
      const a = asBearer(server, token);
      for (const [key, body] of Object.entries({
        berlin: { name: 'Berlin Zoo', city: 'Berlin', founded: 1844 },
        tierpark: { name: 'Tierpark', city: 'Berlin', founded: 1955 },
        vienna: { name: 'Schönbrunn', city: 'Vienna', founded: 1752 },
      })) {
        const r = await a.json('POST', '/v1/zoos', body);
        assert.equal(r.status, 201, r.text);
        ids[key] = r.body.id;
        etags[key] = r.headers.get('etag');
      }
      assert.equal((await a.json('POST', '/v1/orders', { item: 'hay', quantity: 2, status: 'shipped' })).status, 201);
      assert.equal((await a.json('POST', '/v1/orders', { item: 'fish', quantity: 1, status: 'pending' })).status, 201);
      await server.stop();
      server = null;
    });
    after(async () => {
      await server?.stop();
      await dropPg?.();
      rmSync(dir, { recursive: true, force: true });
    });

    test('a rename without a migration, and a narrowed enum, stop serve with exit 2: one line per change with the field and the count; nothing is changed', () => {
      const r = refusedServe(
        configWith(database, (c) => {
          renamed(c, false);
          c.orders.schema.properties.status = { enum: ['pending', 'paid'] };
        }),
      );
      assert.equal(r.status, 2, r.stdout + r.stderr);
      assert.match(r.stderr, /zoos\.city: the schema no longer declares city.*\(3 stored records\); fix: give its new name `renamedFrom: city`/);
      assert.match(r.stderr, /orders\.status: status is now .*stored values do not fit it \(1 stored record\); fix: declare `- \{convert:/);
      assert.match(r.stderr, /No record and no collection table was changed/);
      assert.doesNotMatch(r.stdout, /listening/);
    });

    test('renamedFrom: --dry-run shows the plan and changes nothing; migrate renames; GET, filters, sort, q, cursors and PATCH use the new name', async () => {
      use(configWith(database, (c) => renamed(c, true)));
      const dry = cli('migrate', '--dry-run');
      assert.equal(dry.status, 0, dry.stderr);
      const plan = JSON.parse(dry.stdout);
      assert.equal(plan.dry_run, true);
      assert.deepEqual(plan.schema_migrations, [{ collection: 'zoos', migration: 'rename city to town', records: 3 }]);
      // Dry: serve still finds the migration to do.
      const still = refusedServe(configWith(database, (c) => renamed(c, true)));
      assert.equal(still.status, 2);
      assert.match(still.stderr, /zoos: migration "rename city to town" is declared and not applied \(3 records to change\); fix: run `gatehouse migrate`/);

      const run = cli('migrate');
      assert.equal(run.status, 0, run.stderr);
      const done = JSON.parse(run.stdout);
      assert.equal(done.records_migrated, 3);
      assert.deepEqual(done.columns_added, ['zoos.town']);

      const a = await serve(configWith(database, (c) => renamed(c, true)));
      const berlin = await a.json('GET', `/v1/zoos/${ids.berlin}`);
      assert.equal(berlin.status, 200);
      assert.equal(berlin.body.town, 'Berlin');
      assert.equal('city' in berlin.body, false);
      assert.ok(etags.berlin && berlin.headers.get('etag'));
      assert.notEqual(berlin.headers.get('etag'), etags.berlin, 'a migrated record has a new version: its ETag changed');
      const inBerlin = await a.json('GET', '/v1/zoos?town=Berlin&sortby=name');
      assert.deepEqual(inBerlin.body.map((z: Json) => z.name), ['Berlin Zoo', 'Tierpark']);
      const searched = await a.json('GET', '/v1/zoos?q=vienna');
      assert.deepEqual(searched.body.map((z: Json) => z.id), [ids.vienna]);
      const sorted = await a.json('GET', '/v1/zoos?sortby=town,name&order=desc,asc');
      assert.deepEqual(sorted.body.map((z: Json) => z.town), ['Vienna', 'Berlin', 'Berlin']);
      // Cursors walk the renamed sort field.
      const seen: string[] = [];
      let next: string | null = '/v1/zoos?sortby=town&limit=1';
      while (next) {
        const page = await a.json('GET', next);
        assert.equal(page.status, 200, page.text);
        seen.push(...page.body.map((z: Json) => z.id));
        next = /<([^>]+)>;\s*rel="next"/.exec(page.headers.get('link') ?? '')?.[1]?.replace(server!.url, '') ?? null;
      }
      assert.deepEqual(seen.sort(), Object.values(ids).sort());
      const patched = await a.json('PATCH', `/v1/zoos/${ids.tierpark}`, { founded: 1954 }, { 'content-type': 'application/merge-patch+json' });
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.body.town, 'Berlin');
      const put = await a.json('PUT', `/v1/zoos/${ids.vienna}`, { name: 'Schönbrunn', town: 'Wien', founded: 1752 });
      assert.equal(put.status, 200, put.text);
      // One event for the migration, seen by the collection's readers.
      const events = await a.json('GET', '/v1/events?types=collection.migrated');
      assert.equal(events.status, 200, events.text);
      assert.equal(events.body.length, 1);
      assert.equal(events.body[0].collection, 'zoos');
      assert.deepEqual(events.body[0].data, { migration: { rename: { from: 'city', to: 'town' } }, description: 'rename city to town' });
      assert.equal(events.body[0].owner, null);
      // Another subject, with the read scope and none of these records, sees it too (it is the collection's).
      const other = asBearer(server!, await clientToken(server!, 'evolve-other', 'zoos:read'));
      const theirsMigrated = await other.json('GET', '/v1/events?types=collection.migrated');
      assert.equal(theirsMigrated.body.length, 1);
      const theirs = await other.json('GET', '/v1/events?types=record.created');
      assert.equal(theirs.body.length, 0, 'and nothing of the records of others');
      await server!.stop();
      server = null;

      // Applied once: a second migrate finds nothing to do.
      const again = cli('migrate');
      assert.equal(again.status, 0, again.stderr);
      assert.equal(JSON.parse(again.stdout).records_migrated, 0);
      const history = JSON.parse(again.stdout).schema_migrations_applied;
      assert.deepEqual(history.map((h: Json) => [h.collection, h.migration, h.records]), [['zoos', { rename: { from: 'city', to: 'town' } }, 3]], 'recorded once, with its count');
      assert.ok(Date.parse(history[0].applied_at) > Date.now() - 600_000, 'and its time');
    });

    test('convert: values that do not convert are listed and, with onError: fail, nothing changes; onError: default takes the schema default', async () => {
      // founded becomes a string: every integer converts.
      const asString = configWith(database, (c) => {
        renamed(c, true);
        c.zoos.schema.properties.founded = { type: 'string' };
        c.zoos.migrations = [{ convert: { field: 'founded', to: 'string' } }];
      });
      use(asString);
      const toString = cli('migrate');
      assert.equal(toString.status, 0, toString.stderr);
      assert.equal(JSON.parse(toString.stdout).records_migrated, 3);
      assert.deepEqual(JSON.parse(toString.stdout).columns_rebuilt, ['zoos.founded'], 'the filter column follows the new type');
      let a = await serve(asString);
      assert.equal((await a.json('GET', `/v1/zoos/${ids.berlin}`)).body.founded, '1844');
      assert.deepEqual((await a.json('GET', '/v1/zoos?founded=1844')).body.map((z: Json) => z.id), [ids.berlin]);
      // Strings sort as strings now.
      assert.deepEqual((await a.json('GET', '/v1/zoos?sortby=founded')).body.map((z: Json) => z.founded), ['1752', '1844', '1954']);
      assert.equal((await a.json('PATCH', `/v1/zoos/${ids.tierpark}`, { founded: 'long ago' }, { 'content-type': 'application/merge-patch+json' })).status, 200);
      await server!.stop();
      server = null;

      // Back to integer: "long ago" does not convert.
      const back = (onError: string) =>
        configWith(database, (c) => {
          renamed(c, true);
          c.zoos.schema.properties.founded = { type: 'integer', default: 0 };
          c.zoos.migrations = [{ convert: { field: 'founded', to: 'integer', onError } }];
        });
      use(back('fail'));
      const dry = cli('migrate', '--dry-run');
      assert.equal(dry.status, 2, 'the dry run says the migration would be refused');
      const plan = JSON.parse(dry.stdout);
      assert.deepEqual(plan.schema_migrations[0].examples, [{ id: ids.tierpark, value: 'long ago' }]);
      assert.equal(plan.schema_migrations[0].not_convertible, 1);
      const refused = cli('migrate');
      assert.equal(refused.status, 2);
      assert.match(refused.stderr, new RegExp(`1 record the step cannot apply to \\(a value that does not convert, or both names with different values\\): ${ids.tierpark} \\("long ago"\\)`));
      a = await serve(asString);
      assert.equal((await a.json('GET', `/v1/zoos/${ids.berlin}`)).body.founded, '1844', 'nothing changed');
      await server!.stop();
      server = null;

      use(back('default'));
      const run = cli('migrate');
      assert.equal(run.status, 0, run.stderr);
      a = await serve(back('default'));
      assert.equal((await a.json('GET', `/v1/zoos/${ids.berlin}`)).body.founded, 1844);
      assert.equal((await a.json('GET', `/v1/zoos/${ids.tierpark}`)).body.founded, 0);
      const ranged = await a.json('GET', '/v1/zoos?founded[gte]=1800&sortby=founded');
      assert.deepEqual(ranged.body.map((z: Json) => z.founded), [1844]);
      await server!.stop();
      server = null;
    });

    test('a new required field needs a default; a removed field needs drop; access changes are taken by migrate', async () => {
      const base = (c: Json) => {
        renamed(c, true);
        c.zoos.schema.properties.founded = { type: 'integer', default: 0 };
      };
      const required = configWith(database, (c) => {
        base(c);
        c.zoos.schema.properties.country = { type: 'string' };
        c.zoos.schema.required = ['name', 'country'];
      });
      const r = refusedServe(required);
      assert.equal(r.status, 2);
      assert.match(r.stderr, /zoos\.country: country is new and required, and stored records have none \(3 stored records\); fix: declare `- \{default: \{field: country/);
      const withDefault = configWith(database, (c) => {
        base(c);
        c.zoos.schema.properties.country = { type: 'string' };
        c.zoos.schema.required = ['name', 'country'];
        c.zoos.migrations = [{ default: { field: 'country', value: 'DE' } }];
      });
      use(withDefault);
      assert.equal(cli('migrate').status, 0);

      const dropped = (declared: boolean) =>
        configWith(database, (c) => {
          base(c);
          c.zoos.schema.properties.country = { type: 'string' };
          c.zoos.schema.required = ['name', 'country'];
          delete c.zoos.schema.properties.founded;
          c.zoos.filters = c.zoos.filters.filter((f: string) => f !== 'founded');
          c.zoos.sort = c.zoos.sort.filter((f: string) => f !== 'founded');
          c.zoos.indexes = [];
          c.zoos.migrations = declared ? [{ drop: 'founded' }] : [];
        });
      const refused = refusedServe(dropped(false));
      assert.equal(refused.status, 2);
      assert.match(refused.stderr, /zoos\.founded: the schema no longer declares founded, which stored records hold.*\(3 stored records\)/);
      use(dropped(true));
      assert.equal(cli('migrate').status, 0);

      const shared = dropped(true);
      shared.collections.zoos.access = 'shared';
      const accessRefused = refusedServe(shared);
      assert.equal(accessRefused.status, 2);
      assert.match(accessRefused.stderr, /zoos: access changed from owner to shared: who may read its stored records \(and their past events\) changes \(3 stored records\); fix: run `gatehouse migrate --accept-access-change` to accept it/);
      use(shared);
      const plain = cli('migrate');
      assert.equal(plain.status, 2, 'not without the flag');
      assert.match(plain.stderr, /access changed from owner to shared/);
      assert.equal(cli('migrate', '--accept-access-change').status, 0);
      current = shared;
      const a = await serve(shared);
      const vienna = await a.json('GET', `/v1/zoos/${ids.vienna}`);
      assert.equal(vienna.body.country, 'DE');
      assert.equal('founded' in vienna.body, false);
      assert.equal(vienna.body.town, 'Wien');
      await server!.stop();
      server = null;
    });

    test('a migration killed part way (SIGKILL) resumes where it stopped: every record renamed once, none lost', async () => {
      // 6,000 records of a fresh collection, through the API's bulk jobs.
      const plain = structuredClone(current);
      plain.collections.bulk = { access: 'shared', schema: { type: 'object', properties: { label: { type: 'string' }, n: { type: 'integer' } } }, filters: ['label'], sort: ['n'], search: [] };
      const total = 6_000;
      {
        await serve(plain);
        const a = asBearer(server!, await clientToken(server!, 'evolve', `${ALL_SCOPES} bulk:read bulk:write`));
        for (let i = 0; i < total; i += 3_000) {
          const items = Array.from({ length: 3_000 }, (_, j) => ({ label: `item ${i + j}`, n: i + j }));
          const r = await a.json('POST', '/v1/bulk', items);
          assert.equal(r.status, 202, r.text);
          const job = r.headers.get('location')!.replace(server!.url, '');
          await until('the bulk job to finish', async () => ((await a.json('GET', job)).body.status === 'done' ? true : undefined), 120_000);
        }
        await server!.stop();
        server = null;
      }
      const renamedBulk = structuredClone(plain);
      renamedBulk.collections.bulk.schema.properties = { title: { type: 'string', renamedFrom: 'label' }, n: { type: 'integer' } };
      renamedBulk.collections.bulk.filters = ['title'];
      use(renamedBulk);
      const migrated = engine.pg ? pgCounter(database!) : sqliteCounter(`${dir}/gatehouse.db`);
      // Batches of 500: twelve commits, so that the kill lands between two of them.
      const child = spawn(process.execPath, [CLI, 'migrate', '--batch', '500', '--config', `${dir}/gatehouse.json`, '--data-dir', dir], { cwd: ROOT, stdio: 'ignore' });
      const exited = new Promise((resolve) => child.once('exit', resolve));
      const partWay = await until('some records migrated', async () => {
        const n = await migrated();
        return n > 0 ? n : undefined;
      }, 60_000);
      child.kill('SIGKILL');
      await exited;
      const afterKill = await migrated();
      assert.ok(partWay > 0 && afterKill < total, `killed part way (${afterKill} of ${total} renamed)`);

      // Resumed on a terminal (script(1)): the progress line is rewritten in place after each batch, then the result.
      const command = [process.execPath, CLI, 'migrate', '--batch', '500', '--config', `${dir}/gatehouse.json`, '--data-dir', dir].map((a) => `'${a}'`).join(' ');
      const resumed = spawnSync('script', ['-qec', command, '/dev/null'], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, LOG_LEVEL: 'warn' }, timeout: 120_000 });
      assert.equal(resumed.status, 0, resumed.stdout);
      assert.match(resumed.stdout, /\rmigrating bulk: 500 of 6000 records \(8%\)/);
      assert.match(resumed.stdout, /\rmigrating bulk: 6000 of 6000 records \(100%\)/);
      const result = JSON.parse(resumed.stdout.slice(resumed.stdout.indexOf('{')));
      assert.equal(result.records_migrated, total - afterKill, 'the resumed run changes only what the first did not');
      assert.equal(await migrated(), total);
      await serve(renamedBulk);
      const a = asBearer(server!, await clientToken(server!, 'evolve', 'bulk:read'));
      const page = await a.json('GET', '/v1/bulk?title=item%201234');
      assert.equal(page.body.length, 1);
      assert.equal(page.body[0].n, 1234);
      assert.equal(page.headers.get('x-total-count'), '1');
      const all = await a.json('GET', '/v1/bulk?limit=1');
      assert.equal(all.headers.get('x-total-count'), String(total), 'none lost');
      await server!.stop();
      server = null;
    });
  });
}

/** How many bulk records carry the new name, read beside the migration. */
function sqliteCounter(file: string): () => Promise<number> {
  return async () => {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      return (db.prepare("select count(*) as n from r_bulk where json_extract(doc, '$.title') is not null").get() as { n: number }).n;
    } finally {
      db.close();
    }
  };
}

function pgCounter(url: string): () => Promise<number> {
  return async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return Number((await client.query("select count(*) as n from r_bulk where (doc::jsonb ->> 'title') is not null")).rows[0].n);
    } finally {
      await client.end();
    }
  };
}

test('a database from before schema evolution (records, no served schema) is checked against the config at its first start', async () => {
  const { startApp } = await import('./helpers/app.js');
  const dir = tempDir('gatehouse-baseline-');
  try {
    // Records stored by an app that never recorded a schema: founded as a string, and a field since removed.
    const database = `sqlite:${dir}/gatehouse.db`;
    const zoos = testConfig().collections.zoos;
    const earlier = await startApp({
      database,
      config: { collections: { zoos: { schema: { ...zoos.schema, properties: { ...zoos.schema.properties, region: { type: 'string' }, founded: { type: 'string' } } } } } },
    });
    const a = asBearer(earlier, await clientToken(earlier, 'baseline'));
    assert.equal((await a.json('POST', '/v1/zoos', { name: 'Old Zoo', region: 'Brandenburg', founded: '1844' })).status, 201);
    assert.equal((await a.json('POST', '/v1/zoos', { name: 'Fine Zoo', founded: '1900' })).status, 201);
    await earlier.cleanup();

    const config = testConfig();
    config.storage.database = database;
    writeConfig(dir, config);
    const args = ['--config', `${dir}/gatehouse.json`, '--data-dir', dir];
    const refused = runCli(['serve', ...args, '--port', '0']);
    assert.equal(refused.status, 2, refused.stdout + refused.stderr);
    assert.match(refused.stderr, /zoos\.founded: stored values of founded do not fit its schema \{"type":"integer"\} \(2 stored records\)/);
    assert.match(refused.stderr, /zoos: stored records hold fields the schema does not declare \(region\) \(1 stored record\)/);

    config.collections.zoos.migrations = [{ convert: { field: 'founded', to: 'integer' } }, { drop: 'region' }];
    writeConfig(dir, config);
    const migrated = runCli(['migrate', ...args]);
    assert.equal(migrated.status, 0, migrated.stderr);
    assert.equal(JSON.parse(migrated.stdout).records_migrated, 2);
    const server = await startServer({ dataDir: dir, configFile: `${dir}/gatehouse.json` });
    try {
      const b = asBearer(server, await clientToken(server, 'baseline'));
      const list = await b.json('GET', '/v1/zoos?sortby=founded');
      assert.deepEqual(list.body.map((z: Json) => [z.name, z.founded, 'region' in z]), [['Old Zoo', 1844, false], ['Fine Zoo', 1900, false]]);
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
