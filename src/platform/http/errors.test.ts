import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AccessDenied,
  ConsentRequired,
  InvalidClient,
  InvalidGrant,
  InvalidRequest,
  InvalidScope,
  LoginRequired,
  OAuthError,
  TemporarilyUnavailable,
  TooManyRequests,
  UnauthorizedClient,
  UnsupportedGrantType,
  UnsupportedResponseType,
} from './errors.js';

// The named OAuth errors answer exactly what the generic OAuthError built by hand answered:
// code, status, headers and the RFC 6749 §5.2 body (docs/oauth.md).

const wire = (e: OAuthError) => ({ status: e.status, headers: e.headers, body: e.body() });

test('each named OAuth error has its code and status, and the body of OAuthError', () => {
  const detail = { field: 'what is wrong' };
  const cases: [OAuthError, OAuthError][] = [
    [new InvalidRequest('d', detail), new OAuthError('invalid_request', 'd', 400, detail)],
    [new InvalidGrant('d', detail), new OAuthError('invalid_grant', 'd', 400, detail)],
    [new UnauthorizedClient('d', detail), new OAuthError('unauthorized_client', 'd', 400, detail)],
    [new UnsupportedGrantType('d', detail), new OAuthError('unsupported_grant_type', 'd', 400, detail)],
    [new InvalidScope('d', detail), new OAuthError('invalid_scope', 'd', 400, detail)],
    [new UnsupportedResponseType('d'), new OAuthError('unsupported_response_type', 'd')],
    [new AccessDenied('d'), new OAuthError('access_denied', 'd')],
    [new LoginRequired('d'), new OAuthError('login_required', 'd')],
    [new ConsentRequired('d'), new OAuthError('consent_required', 'd')],
  ];
  for (const [named, byHand] of cases) {
    assert.ok(named instanceof OAuthError);
    assert.deepEqual(wire(named), wire(byHand), named.code);
    assert.equal(named.name, 'OAuthError');
  }
});

test('invalid_client: 401 with the Basic challenge, detail naming the client by default', () => {
  const e = new InvalidClient('Unknown client or bad credentials');
  assert.equal(e.status, 401);
  assert.deepEqual(e.headers, { 'www-authenticate': 'Basic realm="gatehouse", charset="UTF-8"' });
  assert.deepEqual(e.body(), { error: 'invalid_client', error_description: 'Unknown client or bad credentials', detail: { client: 'authentication failed' } });
  assert.deepEqual(new InvalidClient('x', { client_id: 'is required' }).detail, { client_id: 'is required' });
});

test('too_many_requests and temporarily_unavailable carry Retry-After', () => {
  const throttled = new TooManyRequests(2.2, 'Too many', { username: 'too many failed attempts' });
  assert.equal(throttled.status, 429);
  assert.deepEqual(throttled.headers, { 'retry-after': '3' });
  assert.equal(new TooManyRequests(0, 'x').headers['retry-after'], '1');
  const maintenance = new TemporarilyUnavailable(30, 'The service is in maintenance');
  assert.equal(maintenance.status, 503);
  assert.deepEqual(maintenance.headers, { 'retry-after': '30' });
  assert.equal(maintenance.body().error, 'temporarily_unavailable');
});
