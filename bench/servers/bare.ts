// The baseline: a bare node:https (or node:http) server answering every request with one fixed
// JSON object, after reading the request body (as a real endpoint must).
// env: BENCH_PROTOCOL=https|http, BENCH_CERT, BENCH_KEY (PEM files); BENCH_RESPONSE_FILE, a
// diagnostic: answer these exact headers and body instead ({ "headers": {...}, "body": "..." }).
import http from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { FIXED_ZOO } from './fixed-zoo.js';

const recorded = process.env.BENCH_RESPONSE_FILE
  ? (JSON.parse(readFileSync(process.env.BENCH_RESPONSE_FILE, 'utf8')) as { headers: Record<string, string>; body: string })
  : null;
const body = recorded?.body ?? JSON.stringify(FIXED_ZOO);

const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
  req.on('data', () => undefined);
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', ...recorded?.headers, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
};

const protocol = process.env.BENCH_PROTOCOL === 'http' ? 'http' : 'https';
const server =
  protocol === 'https'
    ? https.createServer({ cert: readFileSync(process.env.BENCH_CERT!), key: readFileSync(process.env.BENCH_KEY!) }, handler)
    : http.createServer(handler);
server.keepAliveTimeout = 72_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  console.log(`listening on ${protocol}://127.0.0.1:${port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
