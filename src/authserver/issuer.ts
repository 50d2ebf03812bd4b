import type { Config } from '../platform/config/load.js';

// The issuer identifier (RFC 8414 §2, OpenID Connect Discovery §3): publicUrl. With a path-less
// publicUrl the metadata documents are exactly at the RFC 8414 and OpenID locations; with a path
// (https://example.org/api) they stay under that path like every other route (docs/oauth.md).
// Its own module: the metadata, the authorization responses (RFC 9207 `iss`), introspection and
// the ID tokens all name it.

export function issuerOf(config: Config): string {
  return config.publicUrl;
}
