// The OpenAPI document lints clean under Redocly's `recommended` rules (the rules of
// `redocly lint`, through its engine @redocly/openapi-core): every operation has a summary,
// the info a license, every reference resolves — so documentation tools show no blank rows.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { startApp, type InProcessApp } from './helpers/app.js';
import { testConfig } from './helpers/server.js';

let server: InProcessApp;
before(async () => {
  server = await startApp();
});
after(async () => {
  await server?.cleanup();
});

async function lint(document: string) {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source: document, absoluteRef: 'openapi.json', config });
  return problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`);
}

test("the demo deployment's OpenAPI document has no error and no warning under the recommended rules", async () => {
  const res = await server.fetch('/v1/openapi.json');
  assert.equal(res.status, 200);
  const document = await res.text();
  assert.deepEqual(await lint(document), []);
  const parsed = JSON.parse(document);
  assert.equal(parsed.paths['/zoos/{id}'].get.summary, 'Read one record of zoos');
  assert.equal(parsed.paths['/zoos/{parent_id}/animals'].get.summary, 'List the animals of one record of zoos');
  assert.deepEqual(parsed.info.license, { name: 'CC0 1.0', identifier: 'CC0-1.0' });
  assert.deepEqual(parsed.tags.find((t: { name: string }) => t.name === 'zoos'), { name: 'zoos', description: 'Zoos, each owned by whoever created it.' });
});

test("without api.license the document names no license, and that is the lint's one warning", async () => {
  const config = testConfig();
  delete config.api.license;
  const app = await startApp({ rawConfig: config });
  try {
    const document = await (await app.fetch('/v1/openapi.json')).text();
    assert.equal(JSON.parse(document).info.license, undefined);
    assert.deepEqual(await lint(document), ['warn info-license: Info object should contain `license` field. at #/info']);
  } finally {
    await app.cleanup();
  }
});
