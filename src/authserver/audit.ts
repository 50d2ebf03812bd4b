import type { FastifyBaseLogger } from 'fastify';

// The audit trail: one structured log line per security-relevant event, with who and why —
// never a secret (no tokens, codes, passwords or client secrets).

export type AuditEvent =
  | 'grant.issued'
  | 'grant.denied'
  | 'token.refreshed'
  | 'token.revoked'
  | 'grant.revoked'
  | 'code.issued'
  | 'code.replayed'
  | 'refresh.reused'
  | 'login.succeeded'
  | 'login.failed'
  | 'login.throttled'
  | 'client.auth_failed';

export interface AuditFields {
  client_id?: string | null;
  subject?: string | null;
  grant_id?: string | null;
  grant_type?: string;
  scope?: string;
  reason?: string;
  username?: string;
  ip?: string;
}

export function audit(log: FastifyBaseLogger, event: AuditEvent, fields: AuditFields): void {
  log.info({ event, ...fields }, `audit ${event}`);
}
