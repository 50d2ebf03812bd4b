// The API reference UI at {base_url}/v1/docs: public, Swagger UI from the npm package (no CDN),
// over the generated OpenAPI document with its oauth2 scheme; strict CSP (no inline script).
// In Chromium: it renders the collections' operations with no CSP violation, axe finds nothing
// serious or critical, screenshots at 1280×800 and 390×844 (test-results/docs-*.png).
// Spawned server (test/helpers/server.ts), not in process: Chromium loads the reference UI from the running server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import { ROOT, startServer, type TestServer } from './helpers/server.js';

const SHOTS = path.join(ROOT, 'test-results');
let server: TestServer;
let browser: Browser;
before(async () => {
  server = await startServer();
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  mkdirSync(SHOTS, { recursive: true });
});
after(async () => {
  await browser?.close();
  await server?.cleanup();
});

test('/v1/docs is public HTML with a strict CSP; its assets come from gatehouse itself', async () => {
  const res = await server.fetch('/v1/docs', { headers: { accept: 'text/html' } });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
  const csp = res.headers.get('content-security-policy') ?? '';
  assert.match(csp, /script-src 'self'(;|$)/, 'scripts from this origin only, none inline');
  assert.match(csp, /frame-ancestors 'none'/);
  assert.equal(res.headers.get('cache-control'), 'no-store');
  const html = await res.text();
  assert.doesNotMatch(html, /<script>(?!\s*<\/script>)|https?:\/\/(?!127\.0\.0\.1)[a-z]/i, 'no inline script, no CDN');
  const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => new URL(m[1], `${server.url}/v1/docs`).pathname);
  assert.ok(assets.some((a) => a.endsWith('swagger-ui-bundle.js')));
  for (const asset of assets) {
    const r = await server.fetch(asset);
    assert.equal(r.status, 200, asset);
    if (asset.endsWith('.js')) assert.match(r.headers.get('content-type') ?? '', /javascript/, asset);
    if (asset.endsWith('.css')) assert.match(r.headers.get('content-type') ?? '', /css/, asset);
  }
  const doc = await server.json('GET', '/v1/docs/json');
  assert.equal(doc.status, 200);
  assert.equal(doc.body.components.securitySchemes.oauth2.type, 'oauth2');
  assert.match(doc.body.components.securitySchemes.oauth2.flows.authorizationCode.tokenUrl, /\/oauth\/token$/);
  assert.ok(doc.body.paths['/zoos'] ?? doc.body.paths['/v1/zoos'], 'the collections are described');
});

test('other /v1 paths stay JSON', async () => {
  for (const target of ['/v1/docs/nothing-here', '/v1/docs/static/nothing-here.js']) {
    const r = await server.json('GET', target);
    assert.ok(r.status >= 400, target);
    assert.equal(typeof r.body.error, 'string', target);
  }
});

test('in Chromium: the operations render, no CSP violation, axe finds nothing serious or critical, both sizes', async () => {
  const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const violations: string[] = [];
  page.on('console', (m) => void (/Content Security Policy/i.test(m.text()) && violations.push(m.text())));
  await page.goto(`${server.url}/v1/docs`);
  await page.locator('.opblock').first().waitFor({ timeout: 15_000 });
  assert.ok((await page.locator('.opblock').count()) > 5, 'the operations of the collections');
  assert.ok(await page.getByRole('button', { name: /Authorize/ }).first().isVisible(), 'OAuth "Authorize" is offered');
  for (const size of [{ name: 'desktop', width: 1280, height: 800 }, { name: 'phone', width: 390, height: 844 }]) {
    await page.setViewportSize({ width: size.width, height: size.height });
    await page.screenshot({ path: path.join(SHOTS, `docs-${size.name}.png`) });
    const bad = (await new AxeBuilder({ page }).analyze()).violations.filter((v) => v.impact === 'critical' || v.impact === 'serious');
    assert.deepEqual(bad.map((v) => `${v.id}: ${v.help} — ${v.nodes.slice(0, 4).map((n) => `${n.target.join(' ')} ${n.failureSummary?.split('\n')[1] ?? ''}`).join(' | ')}`), [], `axe at ${size.width} px`);
  }
  assert.deepEqual(violations, []);
  await context.close();
});
