// A diagnostic floor (BENCH_FASTIFY=1): a minimal Fastify 5 app over node:https answering the
// bare server's fixed JSON object from one route — what the framework costs before gatehouse
// adds anything. env: BENCH_CERT, BENCH_KEY.
import https from 'node:https';
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import { FIXED_ZOO } from './fixed-zoo.js';


const app = Fastify({
  logger: false,
  serverFactory: (handler) => https.createServer({ cert: readFileSync(process.env.BENCH_CERT!), key: readFileSync(process.env.BENCH_KEY!) }, handler),
});
app.get('/v1/zoos/:id', async () => FIXED_ZOO);
const address = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`listening on ${address.replace(/^http:/, 'https:')}`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
