// A worker thread of the events benchmark: opens `count` Server-Sent Events streams to
// /v1/events and measures, for every event that arrives, the time since its commit (its `time`).
// Plain JavaScript so that it runs in a worker without a loader.
import { parentPort, workerData } from 'node:worker_threads';
import { Agent, fetch } from 'undici';

const { url, token, ca, count } = workerData;
const agent = new Agent({ connect: { ca }, connections: count + 10, pipelining: 0, bodyTimeout: 0, headersTimeout: 0 });
const delays = [];
let received = 0;
const controllers = [];

async function open() {
  const controller = new AbortController();
  controllers.push(controller);
  const res = await fetch(`${url}/v1/events`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' }, dispatcher: agent, signal: controller.signal });
  if (res.status !== 200) throw new Error(`stream answered ${res.status}`);
  void (async () => {
    let buffer = '';
    try {
      for await (const chunk of res.body) {
        buffer += Buffer.from(chunk).toString();
        let at;
        while ((at = buffer.indexOf('"time":"')) >= 0) {
          const time = Date.parse(buffer.slice(at + 8, at + 32));
          delays.push(Date.now() - time);
          received++;
          buffer = buffer.slice(at + 32);
        }
        if (buffer.length > 64) buffer = buffer.slice(-64);
      }
    } catch {
      // aborted at the end
    }
  })();
}

for (let i = 0; i < count; i += 50) await Promise.all(Array.from({ length: Math.min(50, count - i) }, open));
parentPort.postMessage({ kind: 'open' });
parentPort.on('message', async (m) => {
  if (m === 'count') return parentPort.postMessage({ kind: 'count', received });
  if (m === 'stop') {
    for (const c of controllers) c.abort();
    parentPort.postMessage({ kind: 'done', received, delays: Float64Array.from(delays), cpu: process.cpuUsage() });
    await agent.destroy();
  }
});
