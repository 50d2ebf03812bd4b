import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeMailTransport, shortenedLink } from './transport.js';

test('a logged link keeps the selector and 4 characters of the secret, never more', () => {
  assert.equal(shortenedLink('https://id.example/oauth/verify?token=AbCdEf12.s3cretS3cretS3cret'), 'https://id.example/oauth/verify?token=AbCdEf12.s3cr…');
  assert.equal(shortenedLink('https://id.example/oauth/signup?invite=Sel.0123456789abcdef#frag'), 'https://id.example/oauth/signup?invite=Sel.0123…');
  assert.equal(shortenedLink('https://id.example/oauth/reset?token=undottedsecretvalue&lang=en'), 'https://id.example/oauth/reset?token=undo…&lang=en');
  assert.equal(shortenedLink('https://id.example/oauth/account'), 'https://id.example/oauth/account');
  assert.equal(shortenedLink('not a link with a secret'), '(not a URL)');
});

test('the banner line: the server without credentials, or the mail folder', () => {
  assert.equal(describeMailTransport({ smtp: 'smtp://u:p%40ss@[::1]:2525', from: 'x', dataDir: '/d' }), 'smtp://[::1]:2525 (user redacted)');
  assert.equal(describeMailTransport({ smtp: null, from: 'x', dataDir: '/srv/gh' }), '/srv/gh/mail (no SMTP server: mails are written there)');
});
