// A real local HTTPS webhook receiver for tests: its own self-signed certificate (the server under
// test trusts it through NODE_EXTRA_CA_CERTS), every request recorded, the answer chosen by the test.
import https from 'node:https';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';

export interface Received {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}

export type Responder = (r: Received) => { status: number; headers?: Record<string, string>; delayMs?: number; body?: string };

export interface Receiver {
  url: string;
  port: number;
  /** The certificate file to give the server as NODE_EXTRA_CA_CERTS. */
  caFile: string;
  received: Received[];
  respond: Responder;
  waitFor(predicate: (all: Received[]) => boolean, ms?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(dir: string): Promise<Receiver> {
  const pems = await generate([{ name: 'commonName', value: 'webhook receiver' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate: new Date(Date.now() + 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', digitalSignature: true, keyCertSign: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }, { type: 2, value: 'localhost' }, { type: 2, value: 'vm' }] },
    ],
  } as never);
  const caFile = path.join(dir, 'receiver-ca.pem');
  writeFileSync(caFile, pems.cert);
  const received: Received[] = [];
  const waiters: (() => void)[] = [];
  const receiver = { received, respond: (() => ({ status: 204 })) as Responder } as Receiver;
  const server = https.createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')])),
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      received.push(r);
      waiters.splice(0).forEach((w) => w());
      const answer = receiver.respond(r);
      setTimeout(() => res.writeHead(answer.status, answer.headers ?? {}).end(answer.body), answer.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(receiver, {
    url: `https://127.0.0.1:${port}`,
    port,
    caFile,
    async waitFor(predicate: (all: Received[]) => boolean, ms = 5000) {
      const deadline = Date.now() + ms;
      while (!predicate(received)) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`the receiver did not get what was expected within ${ms} ms (got ${received.length} requests)`);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, Math.min(left, 200));
          waiters.push(() => (clearTimeout(t), resolve()));
        });
      }
      return received;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
