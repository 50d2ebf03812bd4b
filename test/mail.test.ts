// Mail delivery (src/platform/mail): queued in the write of its change, sent by MailDispatcher to a
// real SMTP server (smtp-server, parsed with mailparser) or written to <data dir>/mail, on SQLite
// and PostgreSQL. In process, no HTTP: the dispatcher's clock is the test's, so retries and the
// 24-hour limit are checked without waiting. TLS is checked in a process of its own
// (test/helpers/send-mail.ts), trusting the test server's CA only through NODE_EXTRA_CA_CERTS.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { resolveConfig } from '../src/platform/config/load.js';
import { closeContext, openContext } from '../src/main/context.js';
import type { AppContext } from '../src/contract/context.js';
import { write } from '../src/platform/store/write-path.js';
import { sqlOf } from '../src/platform/store/sql.js';
import { claimDueMails } from '../src/platform/store/mail-outbox.js';
import { Sealer } from '../src/platform/crypto/sealed.js';
import { queueMail, type Mail } from '../src/platform/mail/queue.js';
import { MailDispatcher, MAIL_GIVE_UP_AFTER_MS } from '../src/platform/mail/dispatcher.js';
import { listMails, mailCounts, pendingMailCount } from '../src/platform/mail/list.js';
import { sweepMail, MAIL_KEPT_MS } from '../src/platform/mail/lifecycle.js';
import { describeMailTransport } from '../src/platform/mail/transport.js';
import { createPgDatabase, pgAvailable, ROOT, tempDir, testConfig, writeConfig } from './helpers/server.js';
import { startSmtpServer, type SmtpServer } from './helpers/smtp.js';

const LINK = 'https://127.0.0.1:8443/oauth/verify?token=sel0123456789.S3cr3tS3cr3tS3cr3tS3cr3tS3cr3t';
const SECRET = 'S3cr3tS3cr3tS3cr3tS3cr3tS3cr3t';

const cleanups: (() => Promise<unknown> | void)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

interface Place {
  dataDir: string;
  database: string;
}

/** A data dir and a database (a SQLite file in it, or a fresh PostgreSQL database) that contexts open. */
async function newPlace(engine: 'sqlite' | 'postgres'): Promise<Place> {
  const dataDir = tempDir('gatehouse-mail-');
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  if (engine === 'sqlite') return { dataDir, database: `sqlite:${path.join(dataDir, 'gatehouse.db')}` };
  const pg = await createPgDatabase();
  cleanups.push(() => pg.drop());
  return { dataDir, database: pg.url };
}

async function openAt(place: Place, smtp: string | null): Promise<AppContext> {
  const raw = testConfig({ email: { smtp, from: 'gatehouse <no-reply@gatehouse.test>' }, storage: { database: place.database } });
  const config = resolveConfig(raw, writeConfig(place.dataDir, raw), { dataDir: place.dataDir, port: 8443, env: {} });
  return openContext(config, { resourceTables: false });
}

class Clock {
  constructor(public at = Date.now()) {}
  now = () => this.at;
}

function dispatcherOn(ctx: AppContext, clock?: Clock) {
  const lines: string[] = [];
  const dispatcher = new MailDispatcher({
    store: ctx.store,
    settings: { ...ctx.config.email, dataDir: ctx.config.dataDir },
    sealer: ctx.sealer,
    info: (line) => lines.push(line),
    warn: (line) => lines.push(`warn: ${line}`),
    now: clock?.now,
  });
  return { dispatcher, lines };
}

function mailTo(to: string, over: Partial<Mail> = {}): Mail {
  return {
    kind: 'verify',
    to,
    subject: 'Verify your address',
    text: `Open this link to verify your address:\n\n${LINK}\n\nIt works for 24 hours.`,
    html: `<p>Open this link to verify your address:</p><p><a href="${LINK}">${LINK}</a></p>`,
    link: LINK,
    ...over,
  };
}

function queue(ctx: AppContext, mail: Mail, now = Date.now()): Promise<boolean> {
  return write(ctx.store, (tx) => queueMail(tx, ctx.store, ctx.sealer, mail, now));
}

/** The stored row, body included (only the dispatcher reads it otherwise). */
async function storedMail(ctx: AppContext, id: string) {
  const row = await sqlOf(ctx.store).selectFrom('mail_outbox').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  return { ...row, attempts: Number(row.attempts), next_at: Number(row.next_at), created_at: Number(row.created_at) };
}

async function onlyMail(ctx: AppContext) {
  const [listed, ...more] = await listMails(ctx.store, { limit: 10 });
  assert.equal(more.length, 0);
  return storedMail(ctx, listed.id);
}

async function smtp(mode: 'plain' | 'starttls' | 'smtps' = 'plain', dir?: string): Promise<SmtpServer> {
  const server = await startSmtpServer({ mode, dir });
  cleanups.push(() => server.close());
  return server;
}

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(engine === 'sqlite' ? 'SQLite' : 'PostgreSQL', { skip: engine === 'postgres' && !pgAvailable && 'PostgreSQL not available' }, () => {
    test('a mail queued in a write is delivered with its text and HTML parts, From, Message-ID and kind; then its body is gone', async () => {
      const server = await smtp();
      const ctx = await openAt(await newPlace(engine), server.url);
      const { dispatcher } = dispatcherOn(ctx);
      dispatcher.start();
      try {
        assert.equal(await queue(ctx, mailTo('Alice@example.test')), true);
        const [got] = await server.waitFor(1);
        assert.deepEqual(got.to, ['Alice@example.test']);
        assert.deepEqual(got.parsed.from?.value, [{ address: 'no-reply@gatehouse.test', name: 'gatehouse' }]);
        assert.equal(got.parsed.subject, 'Verify your address');
        assert.equal(got.parsed.headers.get('x-gatehouse-mail'), 'verify');
        assert.ok(got.parsed.text?.split(/\r?\n/).includes(LINK), 'the link on a line of its own');
        assert.match(String(got.parsed.html), /<a href="https:\/\/127\.0\.0\.1:8443\/oauth\/verify\?token=sel0123456789\./);
        await dispatcher.idle();
        const row = await onlyMail(ctx);
        assert.equal(got.parsed.messageId, `<${row.id}@gatehouse.test>`);
        assert.equal(row.status, 'sent');
        assert.equal(row.body, null, 'the secret is not kept once sent');
        assert.ok(row.sent_at !== null);
        assert.equal(row.attempts, 1);
        assert.equal(await pendingMailCount(ctx.store), 0);
      } finally {
        await dispatcher.stop();
        await closeContext(ctx);
      }
    });

    test('a mail queued in a write that rolls back is never sent', async () => {
      const server = await smtp();
      const ctx = await openAt(await newPlace(engine), server.url);
      const { dispatcher } = dispatcherOn(ctx);
      dispatcher.start();
      try {
        await assert.rejects(
          write(ctx.store, async (tx) => {
            await queueMail(tx, ctx.store, ctx.sealer, mailTo('bob@example.test'));
            throw new Error('the change is refused');
          }),
          /the change is refused/,
        );
        dispatcher.wake();
        await dispatcher.idle();
        await new Promise((r) => setTimeout(r, 1_200)); // a tick too
        await dispatcher.idle();
        assert.equal(server.received.length, 0);
        assert.deepEqual(await listMails(ctx.store, { limit: 10 }), []);
      } finally {
        await dispatcher.stop();
        await closeContext(ctx);
      }
    });

    test('a refusing SMTP server: retried after 10 s, then 1 min, the error recorded; delivered once it accepts', async () => {
      const server = await smtp();
      server.refuse = () => 'mailbox busy, try later';
      const ctx = await openAt(await newPlace(engine), server.url);
      const clock = new Clock();
      const { dispatcher } = dispatcherOn(ctx, clock);
      dispatcher.start();
      try {
        await queue(ctx, mailTo('carol@example.test'), clock.at);
        await dispatcher.idle();
        let row = await onlyMail(ctx);
        assert.equal(row.status, 'pending');
        assert.equal(row.attempts, 1);
        assert.match(row.last_error ?? '', /451.*mailbox busy/);
        assert.doesNotMatch(row.last_error ?? '', new RegExp(SECRET));
        assert.equal(row.next_at, clock.at + 10_000);
        assert.ok(row.body !== null, 'kept for the retry');

        clock.at += 9_000;
        dispatcher.wake();
        await dispatcher.idle();
        assert.equal((await onlyMail(ctx)).attempts, 1, 'not due yet');

        clock.at += 1_000;
        dispatcher.wake();
        await dispatcher.idle();
        row = await onlyMail(ctx);
        assert.equal(row.attempts, 2);
        assert.equal(row.next_at, clock.at + 60_000);

        server.refuse = () => null;
        clock.at += 60_000;
        dispatcher.wake();
        await server.waitFor(1);
        await dispatcher.idle();
        row = await onlyMail(ctx);
        assert.equal(row.status, 'sent');
        assert.equal(row.attempts, 3);
        assert.equal(row.body, null);
        assert.match(row.last_error ?? '', /mailbox busy/, 'the last failure stays visible');
      } finally {
        await dispatcher.stop();
        await closeContext(ctx);
      }
    });

    test('24 hours after it was queued, a mail still refused is failed and its body dropped', async () => {
      const server = await smtp();
      server.refuse = () => 'no such mailbox here';
      const ctx = await openAt(await newPlace(engine), server.url);
      const queuedAt = Date.now();
      const clock = new Clock(queuedAt + MAIL_GIVE_UP_AFTER_MS - 5_000);
      const { dispatcher } = dispatcherOn(ctx, clock);
      dispatcher.start();
      try {
        await queue(ctx, mailTo('dave@example.test'), queuedAt);
        await dispatcher.idle();
        const row = await onlyMail(ctx);
        assert.equal(row.status, 'failed');
        assert.equal(row.body, null);
        assert.match(row.last_error ?? '', /no such mailbox/);
        assert.deepEqual(await mailCounts(ctx.store), { pending: 0, sent: 0, failed: 1 });
        assert.equal(server.received.length, 0);
      } finally {
        await dispatcher.stop();
        await closeContext(ctx);
      }
    });

    test('a mail sealed under another secret key fails with that reason, and is not sent', async () => {
      const server = await smtp();
      const ctx = await openAt(await newPlace(engine), server.url);
      const { dispatcher } = dispatcherOn(ctx);
      try {
        const otherKey = new Sealer(Buffer.alloc(32, 7).toString('base64url'), ctx.config.dataDir, null);
        await write(ctx.store, (tx) => queueMail(tx, ctx.store, otherKey, mailTo('erin@example.test')));
        dispatcher.start();
        await dispatcher.idle();
        const row = await onlyMail(ctx);
        assert.equal(row.status, 'failed');
        assert.equal(row.body, null);
        assert.match(row.last_error ?? '', /^the mail cannot be opened: .*another secret key/);
        assert.equal(server.received.length, 0);
      } finally {
        await dispatcher.stop();
        await closeContext(ctx);
      }
    });

    test('two dispatchers on one database send each mail exactly once', async () => {
      const server = await smtp();
      const place = await newPlace(engine);
      const first = await openAt(place, server.url);
      const second = await openAt(place, server.url);
      const a = dispatcherOn(first).dispatcher;
      const b = dispatcherOn(second).dispatcher;
      try {
        for (let i = 0; i < 24; i++) await queue(i % 2 ? first : second, mailTo(`user${i}@example.test`));
        a.start();
        b.start();
        await server.waitFor(24);
        await new Promise((r) => setTimeout(r, 1_500)); // both ticked again: nothing more
        await a.idle();
        await b.idle();
        assert.equal(server.received.length, 24);
        assert.equal(new Set(server.received.map((m) => m.parsed.messageId)).size, 24);
        assert.deepEqual(await mailCounts(first.store), { pending: 0, sent: 24, failed: 0 });
      } finally {
        await a.stop();
        await b.stop();
        await closeContext(first);
        await closeContext(second);
      }
    });

    test('a mail committed while no dispatcher runs (a crash before sending) is sent by the next one', async () => {
      const server = await smtp();
      const place = await newPlace(engine);
      const before = await openAt(place, server.url);
      await queue(before, mailTo('frank@example.test'));
      await closeContext(before);
      assert.equal(server.received.length, 0);

      const restarted = await openAt(place, server.url);
      const { dispatcher } = dispatcherOn(restarted);
      dispatcher.start();
      try {
        const [got] = await server.waitFor(1);
        assert.deepEqual(got.to, ['frank@example.test']);
      } finally {
        await dispatcher.stop();
        await closeContext(restarted);
      }
    });

    test('a mail leased by an instance that died is sent by another once the lease ends', async () => {
      const server = await smtp();
      const place = await newPlace(engine);
      const ctx = await openAt(place, server.url);
      try {
        await queue(ctx, mailTo('grace@example.test'));
        // The dead instance's lease, as claimDueMails leaves it: two minutes from now.
        const now = Date.now();
        assert.equal((await claimDueMails(ctx.store, 'dead-instance', now, now + 120_000, 4)).length, 1);
        const clock = new Clock(now);
        const { dispatcher } = dispatcherOn(ctx, clock);
        dispatcher.start();
        await dispatcher.idle();
        assert.equal(server.received.length, 0, 'leased to the other instance');
        clock.at = now + 120_000;
        dispatcher.wake();
        await server.waitFor(1);
        await dispatcher.stop();
        assert.equal((await onlyMail(ctx)).status, 'sent');
      } finally {
        await closeContext(ctx);
      }
    });

    test('at most 5 mails to one address an hour, however it is capitalised; listing and sweeping', async () => {
      const ctx = await openAt(await newPlace(engine), null);
      try {
        const start = Date.now();
        const spellings = ['heidi@example.test', 'Heidi@example.test', 'HEIDI@EXAMPLE.TEST', ' heidi@Example.test', 'heidi@example.TEST'];
        for (const [i, to] of spellings.entries()) assert.equal(await queue(ctx, mailTo(to), start + i), true, to);
        assert.equal(await queue(ctx, mailTo('hEiDi@example.test'), start + 10), false, 'the 6th is not queued');
        assert.equal(await queue(ctx, mailTo('ivan@example.test'), start + 11), true, 'another address has its own 5');
        assert.equal(await queue(ctx, mailTo('heidi@example.test'), start + 3_600_000), true, 'the next hour');
        assert.equal(await pendingMailCount(ctx.store), 7);

        // The list: newest first, no body, by status, in pages.
        const listed = await listMails(ctx.store, { limit: 3 });
        assert.deepEqual(Object.keys(listed[0]).sort(), ['attempts', 'created_at', 'id', 'kind', 'last_error', 'next_at', 'recipient', 'sent_at', 'status', 'subject']);
        assert.equal(listed[0].recipient, 'heidi@example.test');
        assert.equal(listed[0].created_at, start + 3_600_000);
        const next = await listMails(ctx.store, { limit: 10, before: listed[2].id });
        assert.equal(next.length, 4);
        assert.deepEqual(await listMails(ctx.store, { status: 'failed', limit: 10 }), []);

        // The sweep: the quota rows of a past hour; sent and failed mails after 30 days, never pending ones.
        await sqlOf(ctx.store).updateTable('mail_outbox').set({ status: 'sent', body: null }).where('recipient', '=', 'ivan@example.test').execute();
        const later = start + MAIL_KEPT_MS + 1_000;
        assert.equal(await sweepMail(ctx.store, later), 1 + 2);
        assert.equal(await pendingMailCount(ctx.store), 6);
        assert.deepEqual(await listMails(ctx.store, { status: 'sent', limit: 10 }), []);
      } finally {
        await closeContext(ctx);
      }
    });
  });
}

test('no SMTP server: the mail is written to <data dir>/mail as an RFC 5322 message, and the log line shortens the secret', async () => {
  const place = await newPlace('sqlite');
  const ctx = await openAt(place, null);
  const { dispatcher, lines } = dispatcherOn(ctx);
  dispatcher.start();
  try {
    await queue(ctx, mailTo('judy@example.test', { kind: 'reset' }));
    await dispatcher.idle();
    const dir = path.join(place.dataDir, 'mail');
    const files = readdirSync(dir);
    assert.equal(files.length, 1);
    const row = await onlyMail(ctx);
    assert.match(files[0], new RegExp(`^\\d{8}T\\d{6}Z-${row.id}\\.eml$`));
    const file = path.join(dir, files[0]);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const raw = readFileSync(file);
    assert.match(raw.toString('latin1'), /\r\n\r\n/, 'CRLF line ends, as RFC 5322 has them');
    const parsed = await simpleParser(raw);
    assert.deepEqual(parsed.from?.value, [{ address: 'no-reply@gatehouse.test', name: 'gatehouse' }]);
    assert.equal((parsed.to as { text: string }).text, 'judy@example.test');
    assert.equal(parsed.headers.get('x-gatehouse-mail'), 'reset');
    assert.equal(parsed.messageId, `<${row.id}@gatehouse.test>`);
    assert.ok(parsed.text?.split(/\r?\n/).includes(LINK), 'the link on a line of its own');
    assert.ok(parsed.html);
    assert.equal(row.status, 'sent');
    assert.equal(row.body, null);

    assert.equal(lines.length, 1);
    assert.ok(lines[0].includes('judy@example.test'), lines[0]);
    assert.ok(lines[0].includes(file), lines[0]);
    assert.ok(lines[0].includes('https://127.0.0.1:8443/oauth/verify?token=sel0123456789.S3cr…'), lines[0]);
    assert.ok(!lines[0].includes(SECRET.slice(0, 5)), 'no more of the secret than 4 characters');
    assert.equal(describeMailTransport({ smtp: null, from: 'x', dataDir: place.dataDir }), `${dir} (no SMTP server: mails are written there)`);
  } finally {
    await dispatcher.stop();
    await closeContext(ctx);
  }
});

test('the banner names the SMTP server without its user and password', () => {
  assert.equal(describeMailTransport({ smtp: 'smtp://mailer:hunter2@mail.example.test:587', from: 'x', dataDir: '/d' }), 'smtp://mail.example.test:587 (user redacted)');
  assert.equal(describeMailTransport({ smtp: 'smtps://mail.example.test', from: 'x', dataDir: '/d' }), 'smtps://mail.example.test');
});

describe('TLS', () => {
  const dir = tempDir('gatehouse-mail-tls-');
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** test/helpers/send-mail.ts in a process of its own, with `env`. */
  /** test/helpers/send-mail.ts in a process of its own, with `env` (asynchronously: the SMTP server runs in this one). */
  function sendFromProcess(url: string, env: Record<string, string>): Promise<{ status: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', path.join(ROOT, 'test/helpers/send-mail.ts'), url],
        { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 30_000 },
        (error, stdout, stderr) => resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  test('smtps:// with a certificate Node does not trust: refused, recorded, retried (the check is never turned off)', async () => {
    const server = await smtp('smtps', dir);
    const ctx = await openAt(await newPlace('sqlite'), server.url);
    const { dispatcher } = dispatcherOn(ctx);
    dispatcher.start();
    try {
      await queue(ctx, mailTo('ken@example.test'));
      await dispatcher.idle();
      const row = await onlyMail(ctx);
      assert.equal(row.status, 'pending');
      assert.match(row.last_error ?? '', /self[- ]signed certificate/i);
      assert.equal(server.received.length, 0);
    } finally {
      await dispatcher.stop();
      await closeContext(ctx);
    }
  });

  test('smtps:// trusted through NODE_EXTRA_CA_CERTS: delivered over TLS', async () => {
    const server = await smtp('smtps', dir);
    const run = await sendFromProcess(server.url, { NODE_EXTRA_CA_CERTS: server.caFile! });
    assert.equal(run.stdout.trim(), 'sent', run.stderr);
    const [got] = await server.waitFor(1);
    assert.equal(got.secure, true);
  });

  test('smtp:// upgrades with STARTTLS when offered, trusted through NODE_EXTRA_CA_CERTS; untrusted, it does not fall back to plain text', async () => {
    const server = await smtp('starttls', dir);
    const untrusted = await sendFromProcess(server.url, {});
    assert.equal(untrusted.status, 1);
    assert.match(untrusted.stdout, /self[- ]signed certificate/i);
    assert.equal(server.received.length, 0);

    const run = await sendFromProcess(server.url, { NODE_EXTRA_CA_CERTS: server.caFile! });
    assert.equal(run.stdout.trim(), 'sent', run.stderr);
    const [got] = await server.waitFor(1);
    assert.equal(got.secure, true, 'upgraded before the message was sent');
  });

  test('smtp:// to a server that offers no STARTTLS sends in plain text (as configured: smtps:// for TLS always)', async () => {
    const server = await smtp('plain');
    const run = await sendFromProcess(server.url, {});
    assert.equal(run.stdout.trim(), 'sent', run.stderr);
    const [got] = await server.waitFor(1);
    assert.equal(got.secure, false);
  });
});
