// A worker thread of the load generator (load.ts): runs autocannon for its share of the
// connections and sends back what it counted and every 2xx response time. Plain JavaScript so
// that it runs in a worker without a loader. Several of these let the loader use more than one
// core, so that a fast server (the bare node:https one) is measured nearer its ceiling.
import { parentPort, workerData } from 'node:worker_threads';
import autocannon from 'autocannon';

const { work, connections, pipelining, offset } = workerData;

function run(seconds, collect) {
  let next = offset;
  const { paths } = work;
  const latencies = [];
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: work.url,
        connections,
        pipelining,
        duration: seconds,
        requests: [{ method: work.method, headers: work.headers, body: work.body, setupRequest: (req) => ({ ...req, path: paths[next++ % paths.length] }) }],
      },
      (err, result) => {
        if (err) return reject(err);
        const statusCodes = {};
        for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = count;
        resolve({ ok: result['2xx'], duration: result.duration, errors: result.errors, timeouts: result.timeouts, statusCodes, latencies: Float64Array.from(latencies) });
      },
    );
    if (collect)
      instance.on('response', (_client, statusCode, _bytes, responseTime) => {
        if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
      });
  });
}

parentPort.on('message', async ({ seconds, collect }) => {
  try {
    const result = await run(seconds, collect);
    parentPort.postMessage({ result }, [result.latencies.buffer]);
  } catch (e) {
    parentPort.postMessage({ error: String(e?.message ?? e) });
  }
});
