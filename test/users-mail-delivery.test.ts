// Mail delivery of the user's lifecycle, black-box (docs/users.md#mail): without an SMTP server
// each mail is an .eml file in the data dir, named in the banner and the log (never the link's
// whole secret), and its link works; a crash after the change committed but before its mail was
// sent still sends it, once, after the restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { simpleParser } from 'mailparser';
import { startServer, tempDir, type TestServer } from './helpers/server.js';
import { Mailbox } from './helpers/mailbox.js';
import { CookieJar, hiddenField, page } from './helpers/oauth.js';
import { until } from './helpers/wait.js';

const CLOCK = path.join(path.dirname(fileURLToPath(import.meta.url)), 'helpers', 'shifted-clock.mjs');

async function form(server: TestServer, target: string, fields: Record<string, string>) {
  const jar = new CookieJar();
  const shown = await page(server, jar, target);
  assert.equal(shown.status, 200, shown.html);
  return page(server, jar, target, { csrf_token: hiddenField(shown.html, 'csrf_token'), ...fields });
}

test('no SMTP server: the mail is an .eml file in <data dir>/mail, the banner says so, the log names the file but not the secret, and the link works', async () => {
  const server = await startServer({ config: { auth: { signup: 'open' } }, env: { LOG_LEVEL: 'info' } });
  try {
    const dir = path.join(server.dataDir, 'mail');
    assert.match(server.output(), new RegExp(`mail\\s+${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(no SMTP server`));
    const made = await form(server, '/oauth/signup', { username: 'ines', email: 'ines@example.com', password: 'ines-password-1' });
    assert.equal(made.status, 200);
    const files = await until(
      'the .eml file',
      async () => {
        try {
          const found = readdirSync(dir).filter((f) => f.endsWith('.eml'));
          return found.length ? found : undefined;
        } catch {
          return undefined;
        }
      },
      10_000,
    );
    assert.equal(files.length, 1);
    const mail = await simpleParser(readFileSync(path.join(dir, files[0])));
    assert.equal((mail.to as { text: string }).text, 'ines@example.com');
    assert.equal(mail.subject, 'Confirm your e-mail address');
    assert.ok(typeof mail.html === 'string' && mail.html.includes('Confirm my address'));
    const link = /^(https:\/\/\S+)$/m.exec(mail.text ?? '')?.[1];
    assert.ok(link, 'the link on a line of its own');
    const secret = new URL(link).searchParams.get('token')!.split('.')[1];
    await until('the log line naming the file', async () => (server.output().includes(files[0]) ? true : undefined), 5_000);
    assert.ok(!server.output().includes(secret), 'the log holds no whole secret');

    const jar = new CookieJar();
    const shown = await page(server, jar, new URL(link).pathname + new URL(link).search);
    const done = await page(server, jar, '/oauth/verify', { csrf_token: hiddenField(shown.html, 'csrf_token'), token: hiddenField(shown.html, 'token') });
    assert.equal(done.status, 200);
    assert.match(done.html, /Address confirmed/);
  } finally {
    await server.cleanup();
  }
});

test('a crash after the commit, while the mail was being sent: after the restart it goes out, once', async () => {
  // An SMTP server that accepts the connection and never answers: the send hangs, the process dies in it.
  const sockets: Socket[] = [];
  let connected = 0;
  const stall = createServer((s) => {
    connected++;
    sockets.push(s);
  });
  await new Promise<void>((r) => stall.listen(0, '127.0.0.1', () => r()));
  const stallUrl = `smtp://127.0.0.1:${(stall.address() as { port: number }).port}`;
  const mailbox = await Mailbox.start();
  const dataDir = tempDir();
  const clockFile = path.join(dataDir, 'clock-offset');
  writeFileSync(clockFile, '0');
  let second: TestServer | null = null;
  try {
    const first = await startServer({ dataDir, env: { GATEHOUSE_SMTP_URL: stallUrl } });
    assert.equal(first.cli(['user', 'add', 'cora', '--password-stdin', '--email', 'cora@example.com', '--email-verified'], 'cora-password-1\n').status, 0);
    const asked = await form(first, '/oauth/reset', { login: 'cora' });
    assert.equal(asked.status, 200);
    await until('the send to start', async () => (connected > 0 ? true : undefined), 10_000);
    await first.stop('SIGKILL');
    for (const s of sockets) s.destroy();

    // The dead instance's lease on the mail (2 minutes) has run out on the restarted server's clock.
    writeFileSync(clockFile, String(125_000));
    second = await startServer({ dataDir, configFile: first.configFile, env: { GATEHOUSE_SMTP_URL: mailbox.url, NODE_OPTIONS: `--import ${CLOCK}`, GATEHOUSE_TEST_CLOCK_FILE: clockFile } });
    const mail = await mailbox.waitFor('cora@example.com', 'reset', 1, 20_000);
    assert.ok(mail.link);
    await new Promise((r) => setTimeout(r, 2500));
    assert.equal(mailbox.to('cora@example.com').length, 1, 'sent once');
    const shown = await page(second, new CookieJar(), new URL(mail.link).pathname + new URL(mail.link).search);
    assert.equal(shown.status, 200);
    assert.match(shown.html, /Choose a new password/);
  } finally {
    await second?.cleanup();
    await mailbox.close();
    stall.close();
  }
});
