// Property (fast-check): random sequences of create/read/update/delete by two subjects with
// random scopes never let one see or change the other's records in `access: owner` collections.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startApp, type InProcessApp } from './helpers/app.js';
import { apiClient, type ApiClient } from './helpers/tokens.js';

let server: InProcessApp;
before(async () => {
  server = await startApp({ config: { api: { rateLimit: null } } });
});
after(async () => {
  await server?.cleanup();
});

type Who = 0 | 1;
type Command =
  | { kind: 'create'; who: Who; name: string }
  | { kind: 'read' | 'delete'; who: Who; target: number }
  | { kind: 'update'; who: Who; target: number; name: string }
  | { kind: 'list'; who: Who };

const who = fc.constantFrom<Who>(0, 1);
const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ kind: fc.constant('create' as const), who, name: fc.string({ minLength: 1, maxLength: 12 }) }),
  fc.record({ kind: fc.constantFrom('read' as const, 'delete' as const), who, target: fc.nat(20) }),
  fc.record({ kind: fc.constant('update' as const), who, target: fc.nat(20), name: fc.string({ minLength: 1, maxLength: 12 }) }),
  fc.record({ kind: fc.constant('list' as const), who }),
);
const scopes = fc.subarray(['zoos:read', 'zoos:write'], { minLength: 1 });

// Two subjects for every run; the model of what exists carries over from run to run.
const subjects = ['prop-a', 'prop-b'];
const created: { id: string; owner: Who; name: string; deleted: boolean }[] = [];

test('two subjects never see or change each other\'s zoos, whatever they try', async () => {
  await fc.assert(
    fc.asyncProperty(fc.tuple(scopes, scopes), fc.array(command, { minLength: 1, maxLength: 25 }), async ([scopeA, scopeB], commands) => {
      const clients: ApiClient[] = [
        await apiClient(server, subjects[0], scopeA.join(' ')),
        await apiClient(server, subjects[1], scopeB.join(' ')),
      ];
      const can = (w: Who, what: 'read' | 'write') => [scopeA, scopeB][w].includes(`zoos:${what}`);
      for (const c of commands) {
        const me = clients[c.who];
        if (c.kind === 'create') {
          const res = await me.json('POST', '/v1/zoos', { name: c.name });
          if (!can(c.who, 'write')) {
            assert.equal(res.status, 405);
            continue;
          }
          assert.equal(res.status, 201, res.text);
          created.push({ id: res.body.id, owner: c.who, name: c.name, deleted: false });
          continue;
        }
        if (c.kind === 'list') {
          const res = await me.json('GET', '/v1/zoos?limit=100');
          if (!can(c.who, 'read')) {
            assert.equal(res.status, 405);
            continue;
          }
          assert.equal(res.status, 200);
          const expected = new Set(created.filter((r) => r.owner === c.who && !r.deleted).map((r) => r.id));
          assert.equal(Number(res.headers.get('x-total-count')), expected.size);
          for (const r of res.body as { id: string }[]) assert.ok(expected.has(r.id), `list shows ${r.id}, not one of this subject's records`);
          continue;
        }
        const target = created[created.length - 1 - (c.target % Math.max(created.length, 1))];
        if (!target) continue;
        const url = `/v1/zoos/${target.id}`;
        const mine = target.owner === c.who;
        const needed = c.kind === 'read' ? 'read' : 'write';
        const res =
          c.kind === 'read'
            ? await me.json('GET', url)
            : c.kind === 'update'
              ? await me.json('PATCH', url, { name: c.name })
              : await me.json('DELETE', url);
        if (!can(c.who, needed)) assert.equal(res.status, 405, `${c.kind} without scope`);
        else if (target.deleted) assert.equal(res.status, 410);
        else if (!mine) {
          assert.equal(res.status, 403, `${c.kind} on the other's record`);
          assert.deepEqual(Object.keys(res.body).sort(), ['detail', 'error'], 'a refusal carries no record data');
        } else {
          assert.ok([200, 204].includes(res.status), `${c.kind} own: ${res.status} ${res.text}`);
          if (c.kind === 'read') assert.equal(res.body.name, target.name);
          if (c.kind === 'update') target.name = c.name;
          if (c.kind === 'delete') target.deleted = true;
        }
      }
      // Whatever happened, each surviving record still carries what its owner last wrote.
      for (const r of created.filter((x) => !x.deleted)) {
        const owner = clients[r.owner];
        if (!can(r.owner, 'read')) continue;
        const res = await owner.json('GET', `/v1/zoos/${r.id}`);
        assert.equal(res.status, 200);
        assert.equal(res.body.name, r.name);
        assert.equal(res.body.owner, `client:${subjects[r.owner]}`);
      }
    }),
    { numRuns: Number(process.env.PROP_RUNS ?? 30) },
  );
});
