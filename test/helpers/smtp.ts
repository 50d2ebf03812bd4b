// A real SMTP server for mail tests (smtp-server), every message parsed with mailparser. Plain
// (STARTTLS not offered), STARTTLS or implicit TLS with its own self-signed certificate, which a
// process trusts only through NODE_EXTRA_CA_CERTS; recipients refused while `refuse` says so.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import { generate } from 'selfsigned';

export interface ReceivedMail {
  parsed: ParsedMail;
  /** Over TLS (smtps://, or after STARTTLS). */
  secure: boolean;
  to: string[];
}

export interface SmtpServer {
  url: string;
  received: ReceivedMail[];
  /** A refusal (a 4xx answer to RCPT TO) while it returns a message. */
  refuse: () => string | null;
  /** The certificate file to give a process as NODE_EXTRA_CA_CERTS (tls modes). */
  caFile: string | null;
  waitFor(count: number, ms?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

export type SmtpMode = 'plain' | 'starttls' | 'smtps';

export async function startSmtpServer(options: { mode?: SmtpMode; dir?: string } = {}): Promise<SmtpServer> {
  const mode = options.mode ?? 'plain';
  const tls = mode === 'plain' ? null : await certificate(options.dir!);
  const received: ReceivedMail[] = [];
  const box = { refuse: (() => null) as () => string | null };
  const server = new SMTPServer({
    secure: mode === 'smtps',
    ...(tls ? { key: tls.key, cert: tls.cert } : {}),
    disabledCommands: mode === 'plain' ? ['STARTTLS', 'AUTH'] : ['AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      const refusal = box.refuse();
      if (refusal === null) return callback();
      callback(Object.assign(new Error(refusal), { responseCode: 451 }));
    },
    onData(stream, session, callback) {
      simpleParser(stream).then(
        (parsed) => {
          received.push({ parsed, secure: session.secure, to: session.envelope.rcptTo.map((r) => r.address) });
          callback();
        },
        (e: Error) => callback(e),
      );
    },
  });
  server.on('error', () => undefined); // a client that gives up on the certificate resets its connection
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return Object.assign(box, {
    url: `${mode === 'smtps' ? 'smtps' : 'smtp'}://127.0.0.1:${port}`,
    received,
    caFile: tls?.caFile ?? null,
    async waitFor(count: number, ms = 10_000) {
      const deadline = Date.now() + ms;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`the SMTP server got ${received.length} mails, not ${count}, within ${ms} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return received;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

async function certificate(dir: string) {
  const pems = await generate([{ name: 'commonName', value: 'smtp test server' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate: new Date(Date.now() + 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', digitalSignature: true, keyCertSign: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }, { type: 2, value: 'localhost' }] },
    ],
  } as never);
  const caFile = path.join(dir, `smtp-ca-${Math.random().toString(36).slice(2)}.pem`);
  writeFileSync(caFile, pems.cert);
  return { key: pems.private, cert: pems.cert, caFile };
}
