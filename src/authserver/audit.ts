import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../contract/context.js';
import { observersOf, type Observers } from '../contract/observers.js';

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
  | 'login.unverified'
  | 'logout'
  | 'client.auth_failed'
  | 'user.exported'
  | 'user.deleted'
  | 'user.password_changed'
  | 'user.factor_added'
  | 'user.factor_removed'
  | 'user.recovery_code_used'
  | 'invitation.sent'
  | 'invitation.revoked'
  | 'verification.sent'
  | 'client.registered'
  | 'client.registration_changed'
  | 'client.registration_deleted'
  | 'registration.refused'
  | 'registration_token.created'
  | 'registration_token.revoked';

export interface AuditFields {
  client_id?: string | null;
  subject?: string | null;
  grant_id?: string | null;
  grant_type?: string;
  scope?: string;
  reason?: string;
  username?: string;
  ip?: string;
  /** Who did it, when not the subject (an admin's subject: invitations, a verification link resent). */
  actor?: string;
  invitation_id?: string;
  /** An initial access token of dynamic client registration (its public id). */
  registration_token_id?: string;
}

/** Every audit line written for this context is also handed to these (the metrics count tokens and failed logins). */
export function auditObservers(ctx: AppContext): Observers<[AuditEvent, AuditFields]> {
  return observersOf(ctx, 'audit');
}

export function audit(ctx: AppContext, log: FastifyBaseLogger, event: AuditEvent, fields: AuditFields): void {
  log.info({ event, ...fields }, `audit ${event}`);
  auditObservers(ctx).notify(event, fields);
}
