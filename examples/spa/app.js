// The whole OAuth side of a browser app (public client, PKCE, no secret), in plain JavaScript.
const { gatehouse, clientId } = document.documentElement.dataset;
const redirectUri = location.origin + location.pathname;
const status = (text) => (document.getElementById('status').textContent = text);

const base64url = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const randomString = () => base64url(crypto.getRandomValues(new Uint8Array(32)));

// 1. Sign in: a PKCE verifier and a state kept for the way back, then off to gatehouse.
document.getElementById('login').addEventListener('click', async () => {
  const verifier = randomString();
  const state = randomString();
  sessionStorage.setItem('pkce', JSON.stringify({ verifier, state }));
  const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  const url = new URL(`${gatehouse}/oauth/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    scope: 'zoos:read',
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  location.assign(url);
});

// 2. Back with a code: exchange it (a form POST: gatehouse answers this origin), then call the API.
async function onReturn() {
  const params = new URLSearchParams(location.search);
  if (params.has('error')) return status(`gatehouse said: ${params.get('error')} ${params.get('error_description') ?? ''}`);
  if (!params.has('code')) return;
  const saved = JSON.parse(sessionStorage.getItem('pkce') ?? 'null');
  sessionStorage.removeItem('pkce');
  history.replaceState(null, '', redirectUri); // the code is single-use: keep it out of the history
  if (!saved || params.get('state') !== saved.state) return status('The state does not match: not signing in.');
  const tokenResponse = await fetch(`${gatehouse}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: params.get('code'), redirect_uri: redirectUri, client_id: clientId, code_verifier: saved.verifier }),
  });
  const token = await tokenResponse.json();
  if (!tokenResponse.ok) return status(`Token request failed: ${token.error}`);
  const zoos = await fetch(`${gatehouse}/v1/zoos?limit=5`, { headers: { authorization: `Bearer ${token.access_token}`, accept: 'application/json' } });
  status(`Signed in (${token.scope}). GET /v1/zoos: ${zoos.status}, ${zoos.headers.get('x-total-count')} in all.`);
  document.getElementById('zoos').textContent = JSON.stringify(await zoos.json(), null, 2);
}
onReturn().catch((e) => status(`Failed: ${e.message}`));
