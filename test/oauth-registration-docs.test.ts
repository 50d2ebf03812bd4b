// docs/oauth.md's "Registering clients" walkthrough, verbatim, pasted into bash against a fresh demo
// deployment (only the address changes: the test's server listens on a free port; the CLI is this
// checkout's). Spawned: the walkthrough runs the real CLI and curl beside a server on one data dir.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { DEMO_CONFIG_FILE, ROOT, startServer, tempDir, type TestServer } from './helpers/server.js';

const DOC = readFileSync(path.join(ROOT, 'docs', 'oauth.md'), 'utf8');
const DOC_URL = 'https://127.0.0.1:8443';

let server: TestServer;
let home: string;

before(async () => {
  home = tempDir('gatehouse-registration-doc-');
  mkdirSync(path.join(home, 'data'));
  server = await startServer({ configFile: DEMO_CONFIG_FILE, dataDir: path.join(home, 'data') });
});
after(async () => {
  await server?.stop();
  rmSync(home, { recursive: true, force: true });
});

test('the Registering clients walkthrough registers a client, reads it and deletes it', () => {
  const section = DOC.slice(DOC.indexOf('## Registering clients'));
  const block = /```sh\n([\s\S]*?)^```$/m.exec(section)![1];
  assert.match(block, /client registration-token/);
  const script = block.split(DOC_URL).join(server.url).split('node dist/cli/main.js').join(`node ${path.join(ROOT, 'dist/cli/main.js')}`);
  const run = spawnSync('bash', ['-ec', script], { cwd: home, encoding: 'utf8', timeout: 60_000 });
  assert.equal(run.status, 0, run.stderr);
  const registered = JSON.parse(readFileSync(path.join(home, 'registered.json'), 'utf8'));
  assert.match(registered.client_id, /^reg-/);
  assert.equal(registered.token_endpoint_auth_method, 'none');
  const [read, deleted] = [run.stdout.slice(0, run.stdout.lastIndexOf('}') + 1), run.stdout.slice(run.stdout.lastIndexOf('}') + 1).trim()];
  assert.equal(JSON.parse(read).client_name, 'Zoo CLI');
  assert.equal(deleted, '204');
});
