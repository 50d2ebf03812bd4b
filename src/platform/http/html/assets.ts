import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { COPY_BUTTON_SCRIPT, PASSKEY_SCRIPT } from './script.js';
import { STYLESHEET } from './stylesheet.js';

// The pages' static files, served from gatehouse itself under {base}/admin/assets (where the
// authorization server runs: every page does). A URL carries a hash of the content, so a browser
// keeps a file while it does not change. The stylesheet keeps its first name, console.css.

export const ASSETS_PATH = '/admin/assets';

function asset(body: string, type: string) {
  const version = createHash('sha256').update(body).digest('base64url').slice(0, 12);
  return { body, type, version };
}

// The WebAuthn browser library, from its package as installed (no CDN): the passkey buttons run it.
// The package exports only its modules: the bundle is found beside them (<package>/script/index.js → <package>/dist/bundle).
const WEBAUTHN_BROWSER = readFileSync(path.join(path.dirname(createRequire(import.meta.url).resolve('@simplewebauthn/browser')), '..', 'dist', 'bundle', 'index.umd.min.js'), 'utf8');

export const ASSETS = {
  'console.css': asset(STYLESHEET, 'text/css; charset=utf-8'),
  'console.js': asset(COPY_BUTTON_SCRIPT, 'text/javascript; charset=utf-8'),
  'webauthn.js': asset(WEBAUTHN_BROWSER, 'text/javascript; charset=utf-8'),
  'passkeys.js': asset(PASSKEY_SCRIPT, 'text/javascript; charset=utf-8'),
} as const;

export type AssetName = keyof typeof ASSETS;

/** An asset's URL (`basePath`: the deployment's), versioned by its content. */
export function assetUrl(basePath: string, name: AssetName): string {
  return `${basePath}${ASSETS_PATH}/${name}?v=${ASSETS[name].version}`;
}
