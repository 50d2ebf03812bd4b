// The kit's template escapes every value, passes its own markup as is, and leaves out nothing-values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeHtml, html, trusted } from './index.js';
import { pageSecurityPolicy } from './headers.js';

test('every interpolated value is escaped, in content and in attributes', () => {
  const name = `<script>alert("x")</script> & 'y' \`z\` =`;
  assert.equal(html`<p title="${name}">${name}</p>`.text, `<p title="${escapeHtml(name)}">${escapeHtml(name)}</p>`);
  assert.doesNotMatch(html`${name}`.text, /[<>"'`]/);
});

test('Html goes in as is; arrays join; null, undefined and false leave nothing; numbers print', () => {
  const item = (s: string) => html`<li>${s}</li>`;
  assert.equal(html`<ul>${['a', '<b>'].map(item)}</ul>`.text, '<ul><li>a</li><li>&#60;b&#62;</li></ul>');
  assert.equal(html`[${null}${undefined}${false}${0}]`.text, '[0]');
  assert.equal(html`${trusted('<br>')}`.text, '<br>');
});

test('a card page may post to the consent target; the console never elsewhere', () => {
  assert.match(pageSecurityPolicy('card', ['https://client.example']), /form-action 'self' https:\/\/client\.example;/);
  assert.doesNotMatch(pageSecurityPolicy('card'), /script-src|unsafe/);
  assert.match(pageSecurityPolicy('console'), /script-src 'self'/);
});
