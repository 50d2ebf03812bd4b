// A worker thread of the load generator (load.ts): runs autocannon for its share of the
// connections and sends back what it counted and every 2xx response time. Plain JavaScript so
// that it runs in a worker without a loader. Several of these let the loader use more than one
// core, so that a fast server (the bare node:https one) is measured nearer its ceiling.
//
// The warm-up and the measured seconds are one autocannon run on the same connections: only
// the responses after the warm-up are counted. Measuring on fresh connections would put every
// connection's TLS handshake into the measured window, and a server busy with slow requests
// accepts one new connection per event-loop turn (libuv ≥ 1.45), so the first requests of the
// last connections waited seconds — that, not the steady state, was the p99 of a slow target.
import { parentPort, workerData } from 'node:worker_threads';
import autocannon from 'autocannon';
import { dpopProver } from './dpop.mjs';

const { work, connections, pipelining, offset } = workerData;
// A DPoP target: every request carries a new proof (its own jti) for its URL.
const prove = work.dpop ? dpopProver(work.dpop.key, work.dpop.accessToken) : null;

function run(warmup, seconds) {
  let next = offset;
  const { paths } = work;
  const latencies = [];
  const statusCodes = {};
  let ok = 0;
  let errors = 0;
  let timeouts = 0;
  let measuring = false;
  let from = 0;
  const startMeasuring = () => {
    measuring = true;
    from = performance.now();
    parentPort.postMessage({ measuring: true });
  };
  return new Promise((resolve, reject) => {
    const timer = warmup > 0 ? setTimeout(startMeasuring, warmup * 1000) : (startMeasuring(), null);
    const instance = autocannon(
      {
        url: work.url,
        connections,
        pipelining,
        duration: warmup + seconds,
        requests: [{ method: work.method, headers: work.headers, body: work.body, setupRequest: (req) => {
              const i = next++;
              const path = paths[i % paths.length];
              // `bodies`: one per request, cycled like the paths (an MCP tools/call names its record in the body).
              const body = work.bodies ? { body: work.bodies[i % work.bodies.length] } : {};
              return prove ? { ...req, path, ...body, headers: { ...req.headers, dpop: prove(work.method, work.url + path) } } : { ...req, path, ...body };
            } }],
      },
      (err) => {
        if (timer) clearTimeout(timer);
        if (err) return reject(err);
        if (!measuring) return reject(new Error('the run ended before its warm-up did'));
        resolve({ ok, duration: (performance.now() - from) / 1000, errors, timeouts, statusCodes, latencies: Float64Array.from(latencies) });
      },
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (!measuring) return;
      statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
      if (statusCode >= 200 && statusCode < 300) {
        ok++;
        latencies.push(responseTime);
      }
    });
    instance.on('reqError', (error) => {
      if (!measuring) return;
      errors++;
      if (error?.message === 'request timed out') timeouts++;
    });
  });
}

parentPort.on('message', async ({ warmup, seconds }) => {
  try {
    const result = await run(warmup, seconds);
    parentPort.postMessage({ result }, [result.latencies.buffer]);
  } catch (e) {
    parentPort.postMessage({ error: String(e?.message ?? e) });
  }
});
