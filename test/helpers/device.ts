// The device authorization grant's browser side (RFC 8628, /oauth/device), walked with fetch and a
// cookie jar: type the code, sign in with /authorize's login, decide on the consent page. Takes
// either harness; `next` may be another instance of the same deployment.
import assert from 'node:assert/strict';
import { CookieJar, decide, hiddenField, page, type Decision, type Page, type Target } from './oauth.js';

export type DeviceDecision = Decision;

/** Types `userCode` at /oauth/device, signs in when asked, and returns the consent page. */
export async function deviceConsent(server: Target, jar: CookieJar, userCode: string, username: string, password: string, next: Target = server): Promise<Page> {
  const entry = await page(server, jar, '/oauth/device');
  assert.equal(entry.status, 200, entry.html);
  const typed = await page(next, jar, '/oauth/device', { csrf_token: hiddenField(entry.html, 'csrf_token'), step: 'code', user_code: userCode });
  assert.equal(typed.status, 303, typed.html);
  let p = await page(server, jar, typed.location!);
  if (p.html.includes('name="password"')) {
    const posted = await page(next, jar, '/oauth/device', { request: hiddenField(p.html, 'request'), csrf_token: hiddenField(p.html, 'csrf_token'), step: 'login', username, password });
    assert.equal(posted.status, 303, posted.html);
    p = await page(server, jar, posted.location!);
  }
  assert.equal(p.status, 200, p.html);
  assert.match(p.html, /name="decision" value="allow"/);
  return p;
}

/** Posts the consent form of /oauth/device (every offered scope and the first validity unless told). */
export async function deviceDecide(server: Target, jar: CookieJar, consent: Page, d: DeviceDecision = {}): Promise<Page> {
  return decide(server, jar, consent, d, '/oauth/device');
}
