// A bad config stops `gatehouse serve` before it listens, with exactly one message that names the
// file, the field and the problem, and a non-zero exit status.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify as toYaml } from 'yaml';
import { CLI, ROOT, demoConfig, merge, tempDir, type Json } from './helpers/server.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Outcome {
  status: number | null;
  stdout: string;
  stderr: string;
  file: string;
}

/** Runs `gatehouse serve` on a config text; kills it after 20 s if it wrongly starts. */
function serveWith(text: string, name = 'gatehouse.yaml'): Promise<Outcome> {
  const dir = tempDir('gatehouse-config-');
  dirs.push(dir);
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, 'serve', '--config', file, '--data-dir', path.join(dir, 'data'), '--port', '0'], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'warn', PORT: undefined, HOST: undefined, DATABASE_URL: undefined, REDIS_URL: undefined },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('exit', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr, file });
    });
  });
}

const base = (): Json => merge(demoConfig(), { auth: { demo: false }, server: { port: 0 } });

function yamlOf(over: Json, replace?: (c: Json) => void): string {
  const c = merge(base(), over);
  replace?.(c);
  return toYaml(c);
}

/** Exactly one line on stderr naming the file, the field and the problem; nothing served. */
function assertOneClearMessage(o: Outcome, field: string, problem: RegExp): void {
  assert.notEqual(o.status, 0, `should fail, exited ${o.status}\n${o.stdout}${o.stderr}`);
  assert.notEqual(o.status, null, 'should exit by itself, not be killed');
  assert.equal(o.status, 2, 'a bad config exits with status 2');
  assert.doesNotMatch(o.stdout, /listening/);
  const lines = o.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one message expected, got:\n${o.stderr}`);
  const [line] = lines;
  assert.ok(line.includes(o.file), `names the file ${o.file}: ${line}`);
  assert.ok(line.includes(field), `names the field ${field}: ${line}`);
  assert.match(line, problem);
  assert.doesNotMatch(o.stderr, /\n\s+at\s|Error:/);
  assert.doesNotMatch(line, /must have required property|must match a schema|must be equal to constant|must NOT|instancePath|#\//, 'no raw Ajv wording');
}

describe('bad configs stop start-up with one message naming file, field and problem', { concurrency: 2 }, () => {
  test('unknown top-level key: the nearest known key is suggested', async () => {
    const o = await serveWith(yamlOf({ colections: {} }));
    assertOneClearMessage(o, 'colections', /: unknown key; did you mean collections\?$/);
  });

  test('unknown nested key', async () => {
    const o = await serveWith(yamlOf({ server: { prot: 8443 } }));
    assertOneClearMessage(o, 'server.prot', /: unknown key; did you mean port\?$/);
  });

  test('unknown key inside a collection', async () => {
    const o = await serveWith(yamlOf({ collections: { zoos: { filtres: ['name'] } } }));
    assertOneClearMessage(o, 'collections.zoos.filtres', /: unknown key; did you mean filters\?$/);
  });

  test('a key in the wrong case', async () => {
    const o = await serveWith(yamlOf({ auth: { accessTokenTTL: 60 } }));
    assertOneClearMessage(o, 'auth.accessTokenTTL', /: unknown key; did you mean accessTokenTtl\?$/);
  });

  test('bad type: a string where an integer belongs', async () => {
    const o = await serveWith(yamlOf({ api: { defaultLimit: 'twenty' } }));
    assertOneClearMessage(o, 'api.defaultLimit', /: must be an integer, got "twenty"$/);
  });

  test('bad type: a number where a boolean belongs', async () => {
    const o = await serveWith(yamlOf({ server: { trustProxy: 1 } }));
    assertOneClearMessage(o, 'server.trustProxy', /: must be a boolean \(true or false\), got 1$/);
  });

  test('out of range value', async () => {
    const o = await serveWith(yamlOf({ server: { port: 70000 } }));
    assertOneClearMessage(o, 'server.port', /: must be at most 65535, got 70000$/);
  });

  test('a value that is none of the choices', async () => {
    const o = await serveWith(yamlOf({ collections: { zoos: { access: 'public' } } }));
    assertOneClearMessage(o, 'collections.zoos.access', /: must be owner or shared, got "public"$/);
  });

  test('auth.grants: a grant gatehouse does not know, an empty list, a list that is no list', async () => {
    const unknown = await serveWith(yamlOf({ auth: { grants: ['authorization_code', 'device_code'] } }));
    assertOneClearMessage(unknown, 'auth.grants[1]', /: must be authorization_code, implicit, password, client_credentials, refresh_token or urn:ietf:params:oauth:grant-type:device_code, got "device_code"$/);
    const empty = await serveWith(yamlOf({ auth: { grants: [] } }));
    assertOneClearMessage(empty, 'auth.grants', /: must list at least 1 item$/);
    const text = await serveWith(yamlOf({ auth: { grants: 'password' } }));
    assertOneClearMessage(text, 'auth.grants', /: must be an? (array|list)/);
  });

  test('auth.requirePkce: only public or all', async () => {
    const o = await serveWith(yamlOf({ auth: { requirePkce: 'confidential' } }));
    assertOneClearMessage(o, 'auth.requirePkce', /: must be public or all, got "confidential"$/);
  });

  test('a required key that is missing', async () => {
    const o = await serveWith(yamlOf({}, (c) => delete c.collections.zoos.schema));
    assertOneClearMessage(o, 'collections.zoos.schema', /: is required$/);
  });

  test('a filter on a field that is not a property', async () => {
    const o = await serveWith(yamlOf({}, (c) => (c.collections.zoos.filters = ['name', 'colour'])));
    assertOneClearMessage(o, 'collections.zoos.filters[1]', /"colour" is not a property/);
  });

  test('a sort on a field that is not a property', async () => {
    const o = await serveWith(yamlOf({}, (c) => (c.collections.animals.sort = ['weight'])));
    assertOneClearMessage(o, 'collections.animals.sort[0]', /"weight" is not a property/);
  });

  test('a compound index on a field that is neither a filter nor a sort field', async () => {
    const o = await serveWith(yamlOf({}, (c) => (c.collections.zoos.indexes = [['city', 'colour']])));
    assertOneClearMessage(o, 'collections.zoos.indexes[0][1]', /"colour" cannot be indexed: list it in filters or sort/);
  });

  test('a compound index of one field', async () => {
    const o = await serveWith(yamlOf({}, (c) => (c.collections.zoos.indexes = [['city']])));
    assertOneClearMessage(o, 'collections.zoos.indexes[0]', /2/);
  });

  test('a compound index naming a field twice', async () => {
    const o = await serveWith(yamlOf({}, (c) => (c.collections.zoos.indexes = [['city', 'city']])));
    assertOneClearMessage(o, 'collections.zoos.indexes[0][1]', /named twice/);
  });

  test('a parent pointing to a missing collection', async () => {
    const o = await serveWith(yamlOf({ collections: { animals: { parent: { collection: 'zoo' } } } }));
    assertOneClearMessage(o, 'collections.animals.parent.collection', /no collection named "zoo"/);
  });

  for (const reserved of ['jobs', 'openapi', 'health', 'oauth']) {
    test(`reserved collection name "${reserved}"`, async () => {
      const o = await serveWith(
        yamlOf({ collections: { [reserved]: { schema: { type: 'object', properties: { name: { type: 'string' } } } } } }),
      );
      assertOneClearMessage(o, `collections.${reserved}`, /reserved/);
    });
  }

  test('a server-owned field declared in a schema', async () => {
    const o = await serveWith(yamlOf({ collections: { zoos: { schema: { properties: { created_at: { type: 'string' } } } } } }));
    assertOneClearMessage(o, 'collections.zoos.schema.properties.created_at', /server-owned/);
  });

  test('a collection name that is not lower case', async () => {
    const o = await serveWith(yamlOf({ collections: { Zoos2: { schema: { type: 'object', properties: {} } } } }));
    assertOneClearMessage(o, 'Zoos2', /lower case/);
  });

  test('defaultLimit above maxLimit', async () => {
    const o = await serveWith(yamlOf({ api: { defaultLimit: 500, maxLimit: 100 } }));
    assertOneClearMessage(o, 'api.defaultLimit', /maxLimit/);
  });

  test('the current version listed as retired', async () => {
    const o = await serveWith(yamlOf({ api: { retiredVersions: [0, 1] } }));
    assertOneClearMessage(o, 'api.retiredVersions', /current version/);
  });

  test('a storage URL of an unknown kind', async () => {
    const o = await serveWith(yamlOf({ storage: { database: 'mysql://localhost/x' } }));
    assertOneClearMessage(o, 'storage.database', /sqlite: or postgres/);
  });

  test('YAML that does not parse names the file', async () => {
    const o = await serveWith('server: { port: 0\ncollections: [\n');
    assert.notEqual(o.status, 0);
    const lines = o.stderr.trim().split('\n');
    assert.equal(lines.length, 1, o.stderr);
    assert.ok(lines[0].includes(o.file));
    assert.match(lines[0], /cannot parse/);
  });

  test('a JSON config file is checked the same way', async () => {
    const c = base();
    c.collections.zoos.filters = ['nope'];
    const o = await serveWith(JSON.stringify(c), 'gatehouse.json');
    assertOneClearMessage(o, 'collections.zoos.filters[0]', /"nope" is not a property/);
  });

  test('a missing config file names the file', async () => {
    const dir = tempDir('gatehouse-config-');
    dirs.push(dir);
    const file = path.join(dir, 'absent.yaml');
    const o = await new Promise<Outcome>((resolve) => {
      const child = spawn(process.execPath, [CLI, 'serve', '--config', file, '--data-dir', dir, '--port', '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.on('exit', (status) => (clearTimeout(timer), resolve({ status, stdout, stderr, file })));
    });
    assert.notEqual(o.status, 0);
    assert.equal(o.stderr.trim().split('\n').length, 1, o.stderr);
    assert.ok(o.stderr.includes(file));
    assert.match(o.stderr, /cannot read/);
  });
});
