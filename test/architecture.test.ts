// The architecture of docs/architecture.md, checked: imports point one way (dependency-cruiser,
// .dependency-cruiser.cjs), no SQL outside store modules, each table has exactly one owner, pages
// only through the HTML kit (platform/http/html), and every file the doc names exists.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './helpers/server.js';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    return statSync(full).isDirectory() ? sources(full) : full.endsWith('.ts') && !full.endsWith('.test.ts') ? [full] : [];
  });
}

const files = sources(path.join(ROOT, 'src')).map((f) => ({ file: path.relative(ROOT, f), text: readFileSync(f, 'utf8') }));
const isStore = (file: string) => file.split(path.sep).includes('store');

test('dependency-cruiser: no cycles, no upward imports, SQL modules stay in their server', () => {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'), 'src', '--config', '.dependency-cruiser.cjs'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /no dependency violations found/);
});

test('no SQL outside store modules', () => {
  const sqlWords = /\b(selectFrom|insertInto|updateTable|deleteFrom)\s*\(|\bsql\s*`|\bsql\.(raw|ref|id|table|join)\(/;
  const outside = files.filter((f) => !isStore(f.file) && sqlWords.test(f.text)).map((f) => f.file);
  assert.deepEqual(outside, []);
  // The rule itself works: store modules do contain SQL.
  assert.ok(files.some((f) => isStore(f.file) && sqlWords.test(f.text)));
});

test('pages only through the HTML kit: no other module escapes HTML, writes a document or answers text/html itself', () => {
  const kit = (file: string) => file.startsWith(path.join('src', 'platform', 'http', 'html') + path.sep);
  const byHand = /function\s+escape(Html|Xml)\b|\.replace\(\/\[&<>|['"`]&(#|amp;|lt;|gt;|quot;)|<!doctype html|\.type\(\s*['"`]text\/html|['"`]content-type['"`]\s*,\s*['"`]text\/html/i;
  const outside = files.filter((f) => !kit(f.file) && byHand.test(f.text)).map((f) => f.file);
  assert.deepEqual(outside, []);
  // The rule itself works: the kit does these things.
  assert.ok(files.some((f) => kit(f.file) && byHand.test(f.text)));
});

test('each table is read and written by exactly one store module', () => {
  const owners = new Map<string, Set<string>>();
  const verb = /\b(?:selectFrom|insertInto|updateTable|deleteFrom)\(\s*'([a-z_]+)(?: as [a-z]+)?'/g;
  const join = /\b(?:innerJoin|leftJoin|rightJoin|fullJoin)\(\s*'([a-z_]+)(?: as [a-z]+)?'/g;
  for (const f of files.filter((x) => isStore(x.file) && !x.file.endsWith('migrations.ts'))) {
    for (const re of [verb, join]) for (const m of f.text.matchAll(re)) owners.set(m[1], (owners.get(m[1]) ?? new Set()).add(f.file));
  }
  const shared = [...owners].filter(([, set]) => set.size > 1).map(([table, set]) => `${table}: ${[...set].join(', ')}`);
  assert.deepEqual(shared, []);
  // Every table of the schema has its owner.
  const schema = readFileSync(path.join(ROOT, 'src/platform/store/schema.ts'), 'utf8');
  const tables = [...schema.slice(schema.indexOf('export interface Database')).matchAll(/^\s+([a-z_]+): [A-Za-z]+Table;/gm)].map((m) => m[1]);
  assert.ok(tables.length >= 15, `tables found in schema.ts: ${tables.join(', ')}`);
  assert.deepEqual(tables.filter((t) => !owners.has(t)), []);
});

test('no engine branch outside store modules', () => {
  // What differs between SQLite and PostgreSQL is a Store member (platform/store/store.ts) or an
  // engine module (a store module named sqlite.ts or postgres.ts); a lookup keyed by engine is fine.
  const isEngineModule = (file: string) => file.startsWith(path.join('src', 'platform', 'store') + path.sep) || (isStore(file) && /^(sqlite|postgres)\.ts$/.test(path.basename(file)));
  const branch = /\b(engine|dialect)\s*[!=]==?|[!=]==?\s*['"](sqlite|postgres)['"]|\bcase\s+['"](sqlite|postgres)['"]|\bswitch\s*\([^)]*\bengine\b/;
  const outside = files.filter((f) => !isEngineModule(f.file) && branch.test(f.text)).map((f) => f.file);
  assert.deepEqual(outside, []);
  // The rule itself works: the engine modules do branch (the store's engine is chosen somewhere).
  assert.ok(branch.test("store.engine === 'sqlite'"));
});

test('docs/architecture.md names only files that exist', () => {
  // The map cannot drift again: every `src/…` path, and every backticked file name such as
  // `grants/registry.ts` or `records.ts`, is a file (or folder) of the repository.
  const all = (dir: string): string[] =>
    readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
      e.name === 'node_modules' || e.name.startsWith('.') ? [] : e.isDirectory() ? [path.posix.join(dir, e.name), ...all(path.posix.join(dir, e.name))] : [path.posix.join(dir, e.name)],
    );
  const known = new Set(['src', 'test', 'bench', 'scripts'].flatMap(all));
  const exists = (p: string) => known.has(p) || [...known].some((k) => k.endsWith('/' + p));
  const doc = readFileSync(path.join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const named = new Set([
    ...(doc.match(/\bsrc\/[\w./-]*\w/g) ?? []),
    ...[...doc.matchAll(/`(\w[\w.-]*(?:\/[\w.-]+)*\.(?:ts|mjs|cjs))`/g)].map((m) => m[1]),
  ]);
  assert.ok(named.size > 100, `only ${named.size} paths found: the pattern no longer reads the doc`);
  assert.deepEqual([...named].filter((p) => !exists(p)), []);
});
