// A user's mailbox for the lifecycle tests: the test SMTP server of ./smtp.ts (plain), its mails
// read as a person reads them — to whom, which kind (X-Gatehouse-Mail), the text and HTML parts,
// and the link on a line of its own. `waitFor` waits for the n-th mail to an address (and kind).
import type { ParsedMail } from 'mailparser';
import { startSmtpServer, type SmtpServer } from './smtp.js';

export interface ReceivedMail {
  to: string;
  from: string;
  subject: string;
  kind: string;
  text: string;
  html: string;
  /** The first https link on a line of its own in the text part. */
  link: string | null;
  parsed: ParsedMail;
}

function read(parsed: ParsedMail): ReceivedMail {
  const text = parsed.text ?? '';
  return {
    to: Array.isArray(parsed.to) ? parsed.to.map((a) => a.text).join(', ') : (parsed.to?.text ?? ''),
    from: parsed.from?.text ?? '',
    subject: parsed.subject ?? '',
    kind: String(parsed.headers.get('x-gatehouse-mail') ?? ''),
    text,
    html: typeof parsed.html === 'string' ? parsed.html : '',
    link: /^(https:\/\/\S+)$/m.exec(text)?.[1] ?? null,
    parsed,
  };
}

export class Mailbox {
  private constructor(private readonly server: SmtpServer) {}

  static async start(): Promise<Mailbox> {
    return new Mailbox(await startSmtpServer());
  }

  get url(): string {
    return this.server.url;
  }

  get mails(): ReceivedMail[] {
    return this.server.received.map((m) => read(m.parsed));
  }

  /** The mails to `to` (of `kind`, when given), the address compared in any case. */
  to(address: string, kind?: string): ReceivedMail[] {
    return this.mails.filter((m) => m.to.toLowerCase().includes(address.toLowerCase()) && (kind === undefined || m.kind === kind));
  }

  /** Waits for the `n`-th mail to `to` (of `kind`); fails after `timeoutMs`. */
  async waitFor(address: string, kind?: string, n = 1, timeoutMs = 20_000): Promise<ReceivedMail> {
    const deadline = Date.now() + timeoutMs;
    while (this.to(address, kind).length < n) {
      if (Date.now() > deadline) throw new Error(`no mail ${kind ?? ''} #${n} to ${address} within ${timeoutMs} ms; received: ${this.mails.map((m) => `${m.kind}→${m.to}`).join(', ') || 'none'}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return this.to(address, kind)[n - 1];
  }

  close(): Promise<void> {
    return this.server.close();
  }
}
