import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { SendMailOptions, Transporter } from 'nodemailer';

// Sending one mail (docs/configuration.md#mail), with nodemailer: to the SMTP server of
// `email.smtp`, or, with none, into `<data dir>/mail/` as an RFC 5322 file and one log line.
// TLS is trusted as Node trusts it (system CAs plus NODE_EXTRA_CA_CERTS): nothing here turns a
// certificate check off, and the URL's query (where nodemailer would take such options) is ignored.

/** Where mail goes: `email` of the config, and the data dir for the files. */
export interface MailSettings {
  /** smtp:// (STARTTLS when the server offers it) or smtps:// (TLS from the start), or null: files. */
  smtp: string | null;
  from: string;
  dataDir: string;
}

/** One mail, opened, ready to go. */
export interface OutgoingMail {
  id: string;
  kind: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  link: string | null;
}

export type MailLog = (line: string) => void;

const TIMEOUT_MS = 10_000;

// nodemailer is loaded with the first mail, not at start-up: most starts send none, and every one
// paid for it. It opens no connection before a mail either way.
const nodemailer = () => import('nodemailer');

export interface MailTransport {
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

/** The transport `settings` name; `log` gets the line of each mail written to a file. */
export function openMailTransport(settings: MailSettings, log: MailLog): MailTransport {
  return settings.smtp === null ? new FileTransport(settings, log) : new SmtpTransport(settings.smtp, settings.from);
}

/** For the banner: the server without its user and password, or where the files go. */
export function describeMailTransport(settings: MailSettings): string {
  if (settings.smtp === null) return `${mailDir(settings.dataDir)} (no SMTP server: mails are written there)`;
  const url = new URL(settings.smtp);
  return `${url.protocol}//${url.host}${url.username ? ' (user redacted)' : ''}`;
}

export const mailDir = (dataDir: string) => path.join(dataDir, 'mail');

class SmtpTransport implements MailTransport {
  private transporter: Promise<Transporter> | undefined;

  constructor(
    private readonly smtp: string,
    private readonly from: string,
  ) {}

  async send(mail: OutgoingMail): Promise<void> {
    this.transporter ??= nodemailer().then((m) => m.createTransport(smtpOptions(new URL(this.smtp))));
    await (await this.transporter).sendMail(message(mail, this.from));
  }

  close(): void {
    void this.transporter?.then((t) => t.close());
  }
}

/** The connection from the URL's parts only (see the top of the file). */
function smtpOptions(url: URL) {
  const secure = url.protocol === 'smtps:';
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    auth: url.username ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : undefined,
    connectionTimeout: TIMEOUT_MS,
    greetingTimeout: TIMEOUT_MS,
    socketTimeout: TIMEOUT_MS,
  };
}

class FileTransport implements MailTransport {
  // nodemailer builds the message (MIME parts, encodings, headers) exactly as it would send it.
  private builder: Promise<Transporter> | undefined;

  constructor(
    private readonly settings: MailSettings,
    private readonly log: MailLog,
  ) {}

  async send(mail: OutgoingMail): Promise<void> {
    this.builder ??= nodemailer().then((m) => m.createTransport({ streamTransport: true, buffer: true, newline: 'windows' }));
    const built = await (await this.builder).sendMail(message(mail, this.settings.from));
    const dir = mailDir(this.settings.dataDir);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = path.join(dir, `${compactIsoTime(new Date())}-${mail.id}.eml`);
    writeFileSync(file, built.message as Buffer, { mode: 0o600, flag: 'wx' });
    chmodSync(file, 0o600); // whatever the umask: the file holds a link's secret
    const link = mail.link === null ? '' : `; link ${shortenedLink(mail.link)}`;
    this.log(`mail (${mail.kind}) to ${mail.to} written to ${file}${link}`);
  }

  close(): void {
    void this.builder?.then((t) => t.close());
  }
}

function message(mail: OutgoingMail, from: string): SendMailOptions {
  return {
    from,
    // An address object: nodemailer does not parse the text again (a display name in it could redirect the mail).
    to: { name: '', address: mail.to },
    subject: mail.subject,
    text: mail.text,
    html: mail.html,
    messageId: `<${mail.id}@${domainOf(from)}>`,
    headers: { 'X-Gatehouse-Mail': mail.kind },
  };
}

function domainOf(from: string): string {
  return /@([^\s>]+)>?\s*$/.exec(from)?.[1] ?? 'localhost';
}

/** ISO 8601 basic format (20250102T030405Z): sorts by time and is a file name everywhere. */
function compactIsoTime(at: Date): string {
  return at.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

/**
 * The link as it may be logged: each query value of the form `<selector>.<secret>` keeps its
 * selector and the first 4 characters of its secret; any other value longer than 8 is cut to 4.
 * The fragment is dropped. Enough to find the token's row, never enough to use it.
 */
export function shortenedLink(link: string): string {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    return '(not a URL)';
  }
  const shown = [...url.searchParams].map(([name, value]) => `${name}=${shortenedSecret(value)}`);
  return `${url.origin}${url.pathname}${shown.length ? `?${shown.join('&')}` : ''}`;
}

function shortenedSecret(value: string): string {
  const dot = value.indexOf('.');
  if (dot > 0) return `${value.slice(0, dot)}.${value.slice(dot + 1, dot + 5)}…`;
  return value.length > 8 ? `${value.slice(0, 4)}…` : value;
}
