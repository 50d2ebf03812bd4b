import { hiddenFields, html, trusted, type Html } from '../../platform/http/html/index.js';
import { PASSKEY_SCRIPTS, type CardView } from './views.js';

// The pieces of second factors (docs/oauth.md, Second factors), shared by the login page, the
// account page and the admin console: the code form of the second step, the authenticator set-up
// (secret, otpauth URI, QR code as inline SVG: no script, nothing the CSP must allow), and the
// recovery codes shown once. The names the contract fixes: `data-totp-secret`,
// `data-otpauth-uri`, `name="otp"`, `name="action" value="totp-confirm"`, `data-recovery-code`.

const alert = (error: string | undefined) => (error ? html`<p class="alert" role="alert">${error}</p>` : '');

/** The QR code of an `otpauth://` URI, as SVG markup made by `qrcode` from that URI only. */
export async function enrolmentQr(uri: string): Promise<Html> {
  // Loaded when a set-up page is first drawn, not at every start-up.
  const { default: QRCode } = await import('qrcode');
  const svg = await QRCode.toString(uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
  // qrcode's SVG: two <path>s with fill/stroke attributes, no script, no style; labelled for screen readers.
  return trusted(svg.replace('<svg ', '<svg role="img" aria-label="QR code of the set-up link" focusable="false" '));
}

export interface OtpFormView {
  action: string;
  hidden: Record<string, string | undefined>;
  idPrefix?: string;
  /** The user has no authenticator app (a passkey only): the field takes a recovery code. */
  recoveryOnly?: boolean;
}

/** The second step's form: one field, a TOTP code or a recovery code. */
export function otpForm(v: OtpFormView): Html {
  const id = `${v.idPrefix ?? ''}otp`;
  return html`<form method="post" action="${v.action}" class="signin">
${hiddenFields(v.hidden)}
<label class="field" for="${id}">${v.recoveryOnly ? 'Recovery code' : 'Code from your authenticator app'}</label>
<input type="text" id="${id}" name="otp" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" required autofocus aria-describedby="${id}-hint">
<p class="muted small" id="${id}-hint">${v.recoveryOnly ? 'Use your passkey, or one of the recovery codes you saved.' : '6 digits, or one of your recovery codes if you cannot use the app.'}</p>
<div class="actions buttons"><button type="submit" class="primary">Continue</button></div>
</form>`;
}

export interface EnrolmentView {
  action: string;
  hidden: Record<string, string | undefined>;
  secret: string;
  uri: string;
  qr: Html;
  idPrefix?: string;
  /** Ask for the password too (the account page: a session alone adds no factor); the user's name for password managers. */
  askPassword?: string;
}

/** Setting up an authenticator app: scan or type the secret, then confirm with the code it shows. */
export function totpEnrolment(v: EnrolmentView): Html {
  const id = `${v.idPrefix ?? ''}totp-code`;
  return html`<ol class="steps">
<li>Scan this QR code with an authenticator app (Google Authenticator, 1Password, Aegis…).
<div class="qr">${v.qr}</div></li>
<li>Or type this key into the app: <code class="secret" data-totp-secret="${v.secret}">${v.secret}</code>
<span class="muted small">(time-based, SHA-1, 6 digits, 30 seconds)</span>
<details class="uri"><summary>Set-up link</summary><code data-otpauth-uri="${v.uri}">${v.uri}</code></details></li>
<li>Enter the code the app shows to finish.</li>
</ol>
<form method="post" action="${v.action}">
${hiddenFields(v.hidden)}
${v.askPassword !== undefined ? passwordAgain(`${id}-password`, v.askPassword, 'Your password') : ''}
<label class="field" for="${id}">Code from the app</label>
<input type="text" id="${id}" name="otp" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 \-]{6,7}" maxlength="7" required>
<div class="actions"><button type="submit" name="action" value="totp-confirm" class="primary">Turn on two-step sign-in</button></div>
</form>`;
}

/** The recovery codes, shown this once. */
export function recoveryCodeList(codes: string[]): Html {
  return html`<p>Save these recovery codes somewhere safe. Each signs you in once if you lose your authenticator. <strong>They are shown only now.</strong></p>
<ul class="recovery-codes">
${codes.map((c, i) => html`${i ? '\n' : ''}<li><code data-recovery-code="${c}">${c}</code></li>`)}
</ul>`;
}

export interface SecondFactorPageView {
  action: string;
  hidden: Record<string, string | undefined>;
  username: string;
  error?: string;
  recoveryOnly?: boolean;
  /** The passkey button's form (the login page, for a user with a passkey). */
  passkey?: Html;
}

/** The login and account pages' second step: the code (or, on the login page, the user's passkey). */
export function secondFactorPage(v: SecondFactorPageView): CardView {
  return {
    title: 'Two-step sign-in',
    scripts: v.passkey ? PASSKEY_SCRIPTS : undefined,
    body: html`<h1>Two-step sign-in</h1>
<p class="muted">Signing in as <strong>${v.username}</strong>.</p>
${alert(v.error)}
${otpForm({ action: v.action, hidden: v.hidden, recoveryOnly: v.recoveryOnly })}
${v.passkey ?? ''}`,
  };
}

/** The login and account pages' second step for a user who must have a second factor and has none. */
export function enrolmentPage(v: EnrolmentView & { username: string; error?: string }): CardView {
  return {
    title: 'Set up two-step sign-in',
    wide: true,
    body: html`<h1>Set up two-step sign-in</h1>
<p class="muted">This gatehouse asks <strong>${v.username}</strong> for a code from an authenticator app at every sign-in.</p>
${alert(v.error)}
${totpEnrolment(v)}`,
  };
}

/** After an enrolment: the recovery codes, then on to where the sign-in was going. */
export function recoveryCodesPage(v: { codes: string[]; continueUrl: string; continueLabel: string }): CardView {
  return {
    title: 'Your recovery codes',
    wide: true,
    body: html`<h1>Two-step sign-in is on</h1>
${v.codes.length ? recoveryCodeList(v.codes) : ''}
<p class="actions"><a class="button primary" href="${v.continueUrl}">${v.continueLabel}</a></p>`,
  };
}

export interface PasskeyFormView {
  action: string;
  hidden: Record<string, string | undefined>;
  /** The ceremony's options (JSON), with the challenge the server remembered. */
  options: unknown;
  kind: 'signin' | 'register';
  /** Ask for the password too (registering on the account page); the user's name for password managers. */
  askPassword?: string;
}

/** A password field asked again before a change to how the account signs in. */
function passwordAgain(id: string, username: string, label: string): Html {
  return html`<input type="text" name="username" value="${username}" autocomplete="username" hidden>
<label class="field" for="${id}">${label}</label>
<input type="password" id="${id}" name="password" autocomplete="current-password" required>`;
}

/**
 * A passkey button in a form of its own, hidden until the script finds WebAuthn (the page works
 * without it): the script runs the ceremony and posts its result as `credential`.
 */
export function passkeyForm(v: PasskeyFormView): Html {
  const status = `passkey-${v.kind}-status`;
  const button =
    v.kind === 'signin'
      ? html`<button type="button" data-passkey-signin data-passkey-options="${JSON.stringify(v.options)}" aria-describedby="${status}">Use a passkey</button>`
      : html`<button type="button" data-passkey-register data-passkey-options="${JSON.stringify(v.options)}" aria-describedby="${status}" class="primary">Add a passkey</button>`;
  return html`<form method="post" action="${v.action}" class="passkey" hidden>
${hiddenFields({ ...v.hidden, credential: '' })}
${v.askPassword !== undefined ? passwordAgain(`passkey-${v.kind}-password`, v.askPassword, 'Your password, to add a passkey') : ''}
<div class="actions">${button}</div>
<p class="muted small" id="${status}" role="status"></p>
</form>`;
}
