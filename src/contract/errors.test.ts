import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AlreadyExists, InvalidInput, NotApplicable, modelProblem } from './errors.js';

// The one translation of model errors that the admin API, the console and the CLI start from.

test('a broken rule: 400, the model message, its per-field detail', () => {
  const detail = { username: 'must be 1 to 64 characters' };
  assert.deepEqual(modelProblem(new InvalidInput('username: must be 1 to 64 characters', detail)), {
    status: 400,
    message: 'username: must be 1 to 64 characters',
    detail,
    byField: true,
  });
});

test('a duplicate: 409 on the field it is about (id unless named)', () => {
  const e = new AlreadyExists('a client "app" already exists');
  assert.deepEqual(modelProblem(e), { status: 409, message: e.message, detail: { id: 'already exists' }, byField: false });
  assert.deepEqual(modelProblem(e, 'client_id')?.detail, { client_id: 'already exists' });
});

test('not applicable: 400 naming the field the item lacks', () => {
  const e = new NotApplicable('client "spa" is public: it has no secret', 'client_secret');
  assert.deepEqual(modelProblem(e), { status: 400, message: e.message, detail: { client_secret: e.message }, byField: false });
});

test('anything else is not a model error', () => {
  assert.equal(modelProblem(new Error('boom')), null);
  assert.equal(modelProblem('text'), null);
});
