// Which failures mean "the database is not there now" rather than "this request is wrong" or
// "the program is wrong": PostgreSQL restarting or unreachable, a full disk under SQLite. A
// request that meets one is answered 503 with Retry-After (error-handler.ts), never a 500 or a
// hang: the pool reconnects by itself and the next request succeeds once the database is back.

/** Node's socket errors when the database server is down, restarting or cut off. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * PostgreSQL SQLSTATEs: class 08 (connection exception), class 57P (the server shutting down,
 * crashed, or still starting: admin_shutdown, crash_shutdown, cannot_connect_now), 53300
 * (too_many_connections) and 53100 (disk_full).
 */
function postgresUnavailable(code: string): boolean {
  return code.startsWith('08') || code.startsWith('57P') || code === '53300' || code === '53100';
}

/**
 * SQLite: the disk or the file system refuses (SQLITE_FULL, SQLITE_IOERR_*), or the database is
 * locked past busy_timeout by another process (a backup, a migration).
 */
function sqliteUnavailable(code: string): boolean {
  return code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR') || code === 'SQLITE_BUSY' || code === 'SQLITE_CANTOPEN';
}

/** The pg driver's own words for a connection that is gone or never came (it sets no code). */
const PG_DRIVER_MESSAGES = [/^Connection terminated/, /timeout exceeded when trying to connect/, /Client has encountered a connection error/, /Connection ended/];

/** True when `err` says the database is unavailable for now (503), not that the request or the program is wrong. */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { code?: unknown; message?: unknown; errors?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  if (NETWORK_CODES.has(code)) return true;
  if (/^SQLITE_/.test(code)) return sqliteUnavailable(code);
  if (/^[0-9A-Z]{5}$/.test(code)) return postgresUnavailable(code);
  if (typeof e.message === 'string' && PG_DRIVER_MESSAGES.some((m) => m.test(e.message as string))) return true;
  // Several addresses tried at once (localhost → ::1 and 127.0.0.1): Node reports an AggregateError.
  if (Array.isArray(e.errors)) return e.errors.length > 0 && e.errors.every(isDatabaseUnavailable);
  return false;
}

/**
 * PostgreSQL refusing text it cannot store: a NUL character (U+0000) in text (22021,
 * character_not_in_repertoire) or in jsonb (22P05, untranslatable_character). Bad input from the
 * request — a 400, never a 500 — which SQLite stores as it is.
 */
export function isUnstorableText(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '22021' || code === '22P05';
}
