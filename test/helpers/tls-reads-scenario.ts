// The scenario of test/http-tls-reads.test.ts, run in a process of its own (under the test
// runner's process the event loop turns differently and Node's failure does not show): an HTTPS
// server whose responses above 16 KiB are written in a check-phase callback of a busy event loop,
// and a client in another process that reads each and then POSTs a body of several TLS records on
// the same connection. Prints {answers, parserErrors} as JSON. Argument: "gatehouse" serves with
// the server gatehouse listens with (createHttpsServer), "node" with a bare node:https server.
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generate } from 'selfsigned';
import { createHttpsServer } from '../../src/platform/http/https-server.js';

const ROUNDS = Number(process.env.ROUNDS ?? 30);
const BODY = 70_000;
// Long enough for the client in the other process to read the response and send its POST meanwhile,
// even on a slow or loaded machine (30 ms did not reproduce the loss on one ten times slower).
const BUSY_MS = Number(process.env.BUSY_MS ?? 150);
const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-tls-reads-'));
const client = path.join(dir, 'client.mjs');
writeFileSync(
  client,
  `import { Agent, fetch } from ${JSON.stringify(import.meta.resolve('undici'))};
const agent = new Agent({ connect: { rejectUnauthorized: false }, connections: 1 });
const body = Buffer.alloc(${BODY}, 'y');
const answers = [];
for (let i = 0; i < ${ROUNDS}; i++) {
  try {
    await (await fetch(process.argv[2] + '/big', { dispatcher: agent })).arrayBuffer();
    const res = await fetch(process.argv[2] + '/post', { method: 'POST', body, dispatcher: agent });
    answers.push(res.status === 200 && (await res.text()) === '${BODY}' ? 'read' : 'status ' + res.status);
  } catch (e) {
    answers.push('failed: ' + (e.cause?.code ?? e.message));
  }
}
process.send(answers, () => process.exit(0));`,
);

const pems = await generate([{ name: 'commonName', value: 'localhost' }], { keyType: 'ec', curve: 'P-256', algorithm: 'sha256' });
const big = Buffer.alloc(100_000, 'x');
const busy = (ms: number) => {
  const end = Date.now() + ms;
  while (Date.now() < end);
};
const handler = (req: IncomingMessage, res: ServerResponse) => {
  // Written by a check-phase callback that then keeps the loop busy, as a bulk job's chunk does:
  // the write is done only at the next check phase, after the next poll has read the next request.
  if (req.method === 'GET') return void setImmediate(() => (res.end(big), busy(BUSY_MS)));
  let length = 0;
  req.on('data', (d: Buffer) => (length += d.length)).on('end', () => res.end(String(length)));
};
const tls = { key: pems.private, cert: pems.cert };
const server = process.argv[2] === 'gatehouse' ? createHttpsServer(tls, handler) : https.createServer(tls, handler);
const parserErrors: string[] = [];
server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
  parserErrors.push(String(err.code));
  socket.destroy();
});
server.listen(0, '127.0.0.1', () => {
  const child = fork(client, [`https://127.0.0.1:${(server.address() as { port: number }).port}`], { execArgv: [] });
  child.on('message', (answers) => {
    process.stdout.write(JSON.stringify({ answers, parserErrors }) + '\n');
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
  child.on('exit', (code) => {
    process.stderr.write(`the client exited with ${code}\n`);
    process.exit(1);
  });
});
