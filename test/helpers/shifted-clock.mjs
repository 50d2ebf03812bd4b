// Preloaded into a server under test (NODE_OPTIONS=--import): Date.now() runs ahead of the real
// clock by the milliseconds written in the file GATEHOUSE_TEST_CLOCK_FILE (read every 50 ms), so
// a test can move a running server past an expiry (a link's hour) without waiting for it.
import { readFileSync } from 'node:fs';

const file = process.env.GATEHOUSE_TEST_CLOCK_FILE;
if (file) {
  const realNow = Date.now;
  let offset = 0;
  const read = () => {
    try {
      offset = Number(readFileSync(file, 'utf8')) || 0;
    } catch {
      offset = 0;
    }
  };
  read();
  setInterval(read, 50).unref();
  Date.now = () => realNow() + offset;
}
