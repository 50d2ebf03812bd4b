import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Sealer, SealedSecretError } from './sealed.js';

test('a sealed secret opens with its key and context only', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sealed-'));
  const a = new Sealer(null, dir);
  const sealed = a.seal('JBSWY3DPEHPK3PXP', 'factor:1');
  assert.ok(!sealed.includes('JBSWY3DPEHPK3PXP'));
  assert.equal(a.open(sealed, 'factor:1'), 'JBSWY3DPEHPK3PXP');
  assert.equal(new Sealer(null, dir).open(sealed, 'factor:1'), 'JBSWY3DPEHPK3PXP', 'the file key is read back');
  assert.equal(statSync(path.join(dir, 'secret.key')).mode & 0o777, 0o600);
  assert.throws(() => a.open(sealed, 'factor:2'), SealedSecretError, 'another row cannot take it');
  // The ciphertext's first character changed: every bit of it counts (the last character of a
  // base64url tag has unused bits, so changing it may change nothing — a flaky test once).
  const parts = sealed.split('.');
  parts[3] = (parts[3][0] === 'A' ? 'B' : 'A') + parts[3].slice(1);
  const tampered = parts.join('.');
  assert.throws(() => a.open(tampered, 'factor:1'), SealedSecretError);
  const other = new Sealer(Buffer.alloc(32, 7).toString('base64url'), dir);
  assert.throws(() => other.open(sealed, 'factor:1'), /another secret key/);
  assert.ok(readFileSync(path.join(dir, 'secret.key'), 'utf8').trim().length >= 43);
});

test('a configured key shorter than 32 bytes is refused', () => {
  assert.throws(() => new Sealer('c2hvcnQ', '/nonexistent').seal('x'), /at least 32 bytes/);
});

test('the first value stored names the key; a process with another key refuses to store and to start', async () => {
  const { openStore } = await import('../store/open-store.js');
  const { migrateCore } = await import('../store/migrations.js');
  const { checkSealingKey } = await import('./sealed.js');
  const store = await openStore('sqlite::memory:');
  try {
    await migrateCore(store);
    const ours = new Sealer(Buffer.alloc(32, 1).toString('base64url'), '/nonexistent', store);
    const theirs = new Sealer(Buffer.alloc(32, 2).toString('base64url'), '/nonexistent', store);
    await checkSealingKey(store, theirs); // nothing sealed yet: any key may start
    const sealed = await ours.sealForStorage('secret', 'row:1');
    assert.equal(ours.open(sealed, 'row:1'), 'secret');
    await assert.rejects(theirs.sealForStorage('other', 'row:2'), /another secret key/);
    await assert.rejects(checkSealingKey(store, theirs), /GATEHOUSE_SECRET_KEY/);
    await checkSealingKey(store, ours);
  } finally {
    await store.close();
  }
});
