// Web origins (RFC 6454) as CORS compares them: scheme://host[:port], the port only when it is not
// the scheme's default. A client's origins are those of its http(s) redirect URIs plus the ones
// registered with --origin; native-app schemes (com.example.app:/cb) have none.

/** The origin of an http(s) URL, or null (another scheme, or not a URL). */
export function webOrigin(url: string): string | null {
  try {
    const u = new URL(url);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.origin : null;
  } catch {
    return null;
  }
}

/** The distinct origins of these URLs, in order. */
export function webOrigins(urls: readonly string[]): string[] {
  return [...new Set(urls.map(webOrigin).filter((o): o is string => o !== null))];
}

/**
 * Why `value` cannot be registered as an origin (null when it can): exactly what a browser sends
 * in `Origin` — no path, query, fragment or credentials, https, or http on the loopback interface.
 */
export function originProblem(value: string): string | null {
  const origin = webOrigin(value);
  if (origin === null || origin !== value) return `${value} is not an origin (scheme://host[:port], no path, no trailing slash)`;
  const { protocol, hostname } = new URL(value);
  if (protocol === 'http:' && !['127.0.0.1', 'localhost', '[::1]'].includes(hostname))
    return `${value}: plain http is only allowed for 127.0.0.1, [::1] and localhost`;
  return null;
}
