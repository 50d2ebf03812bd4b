// The resource-API peer: json-server 0.17 (express + lowdb in memory) serving the same zoos as
// gatehouse, without any auth. json-server has no TLS of its own, so its express app is handed to
// node:https with the same certificate as every other server (like for like); BENCH_PROTOCOL=http
// serves it over plain HTTP instead. Set up as its CLI does, minus the request logger.
// env: BENCH_DB (a JSON file { "zoos": [...] }), BENCH_CERT, BENCH_KEY.
import http from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import jsonServer from 'json-server';

const db = JSON.parse(readFileSync(process.env.BENCH_DB!, 'utf8'));
const app = jsonServer.create();
app.use(jsonServer.defaults({ logger: false }));
app.use(jsonServer.router(db));

const protocol = process.env.BENCH_PROTOCOL === 'http' ? 'http' : 'https';
const server =
  protocol === 'https'
    ? https.createServer({ cert: readFileSync(process.env.BENCH_CERT!), key: readFileSync(process.env.BENCH_KEY!) }, app)
    : http.createServer(app);
server.keepAliveTimeout = 72_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  console.log(`listening on ${protocol}://127.0.0.1:${port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
