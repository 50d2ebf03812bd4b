// A real SMTP server for the tests (smtp-server), every message parsed with mailparser: what a
// user's mailbox would receive. `refuse` makes it answer 451 to every recipient (a server that is
// down for a while); `waitFor` waits for a mail to an address (and kind).
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import type { AddressInfo } from 'node:net';

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

export class Mailbox {
  readonly mails: ReceivedMail[] = [];
  refuse = false;
  private waiters: (() => void)[] = [];
  private constructor(private readonly server: SMTPServer, readonly port: number) {}

  static async start(): Promise<Mailbox> {
    let box: Mailbox | null = null;
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onRcptTo(_address, _session, callback) {
        if (box?.refuse) return callback(Object.assign(new Error('mailbox unavailable, try later'), { responseCode: 451 }));
        callback();
      },
      onData(stream, _session, callback) {
        simpleParser(stream)
          .then((parsed) => {
            box!.receive(parsed);
            callback();
          })
          .catch(callback);
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const port = (server.server.address() as AddressInfo).port;
    box = new Mailbox(server, port);
    return box;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  private receive(parsed: ParsedMail): void {
    const text = parsed.text ?? '';
    const to = Array.isArray(parsed.to) ? parsed.to.map((a) => a.text).join(', ') : (parsed.to?.text ?? '');
    this.mails.push({
      to,
      from: parsed.from?.text ?? '',
      subject: parsed.subject ?? '',
      kind: String(parsed.headers.get('x-gatehouse-mail') ?? ''),
      text,
      html: typeof parsed.html === 'string' ? parsed.html : '',
      link: /^(https:\/\/\S+)$/m.exec(text)?.[1] ?? null,
      parsed,
    });
    for (const w of this.waiters.splice(0)) w();
  }

  /** The mails to `to` (of `kind`, when given). */
  to(address: string, kind?: string): ReceivedMail[] {
    return this.mails.filter((m) => m.to.toLowerCase().includes(address.toLowerCase()) && (kind === undefined || m.kind === kind));
  }

  /** Waits for the `n`-th mail to `to` (of `kind`); fails after `timeoutMs`. */
  async waitFor(address: string, kind?: string, n = 1, timeoutMs = 10_000): Promise<ReceivedMail> {
    const deadline = Date.now() + timeoutMs;
    while (this.to(address, kind).length < n) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no mail ${kind ?? ''} #${n} to ${address} within ${timeoutMs} ms; received: ${this.mails.map((m) => `${m.kind}→${m.to}`).join(', ') || 'none'}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.to(address, kind)[n - 1];
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
