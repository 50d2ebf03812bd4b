// The resource-API peer, current line: json-server 1.x (tinyhttp + lowdb, in memory) serving the
// same zoos as gatehouse, without any auth, beside json-server 0.17 (json-server.ts). Its app is
// built as its CLI builds it (createApp over a lowdb database), minus the file watcher and the
// logger, and handed to node:https with the same certificate as every other server.
// env: BENCH_DB (a JSON file { "zoos": [...] }), BENCH_CERT, BENCH_KEY.
import https from 'node:https';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
// @ts-expect-error json-server 1.x ships no type declarations for its app module
import { createApp } from 'json-server-1/lib/app.js';

// lowdb's in-memory database as json-server's service uses it: `data`, and `write()` after a change.
const db = { data: JSON.parse(readFileSync(process.env.BENCH_DB!, 'utf8')), write: async () => undefined, read: async () => undefined };
// Its static file server reads ./public at start: an empty one, as in a fresh project.
const home = mkdtempSync(path.join(os.tmpdir(), 'json-server-1-'));
mkdirSync(path.join(home, 'public'));
process.chdir(home);
const app = createApp(db, { logger: false });
const server = https.createServer({ cert: readFileSync(process.env.BENCH_CERT!), key: readFileSync(process.env.BENCH_KEY!) }, (req, res) => app.handler(req, res));
server.keepAliveTimeout = 72_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  console.log(`listening on https://127.0.0.1:${port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
