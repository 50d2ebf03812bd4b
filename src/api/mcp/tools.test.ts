import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildCollections } from '../../contract/collections.js';
import type { Caller } from '../../contract/caller.js';
import { catalogueOf, toolsFor } from './tools.js';

const limits = { defaultLimit: 20, maxLimit: 100 };
const collections = buildCollections({
  plants: {
    description: 'Plants of the greenhouse.',
    schema: {
      type: 'object',
      required: ['name'],
      properties: { name: { type: 'string', description: 'Its common name' }, height: { type: 'number', description: 'In centimetres' }, kind: { enum: ['tree', 'herb'] }, indoor: { type: 'boolean' } },
    },
    filters: ['name', 'height', 'kind', 'indoor'],
    sort: ['height'],
  },
  leaves: { parent: { collection: 'plants', field: 'plant_id' }, schema: { type: 'object', properties: { colour: { type: 'string' } } }, filters: [], sort: [] },
});
const caller = (scopes: string[]) => ({ scopes: new Set(scopes) }) as unknown as Caller;

test('descriptions from the config: the collection in every tool, each field in its schemas', () => {
  const tools = toolsFor(catalogueOf(collections, limits), caller(['plants:read', 'plants:write']));
  const create = tools.find((t) => t.name === 'create_plants')!;
  assert.match(create.description, /Plants of the greenhouse/);
  assert.equal(create.inputSchema.properties.name.description, 'Its common name');
  assert.deepEqual(create.inputSchema.required, ['name']);
  const list = tools.find((t) => t.name === 'list_plants')!.inputSchema.properties as Record<string, any>;
  assert.match(list.height.description, /^In centimetres\. /);
  assert.deepEqual(Object.keys(list.height.anyOf[1].properties), ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'null']);
  assert.deepEqual(list.kind.anyOf[0], { type: 'string', enum: ['tree', 'herb'] });
  assert.deepEqual(list.indoor.anyOf[0], { type: 'boolean' });
  assert.equal(list.q, undefined, 'no search fields: no q');
  assert.equal(list.limit.maximum, 100);
  const update = tools.find((t) => t.name === 'update_plants')!.inputSchema;
  assert.deepEqual(update.required, ['id']);
  assert.deepEqual(update.properties.height, { description: 'In centimetres', anyOf: [{ type: 'number', description: 'In centimetres' }, { type: 'null' }] }, 'an optional field may be removed');
  assert.deepEqual(update.properties.name, { type: 'string', description: 'Its common name' }, 'a required one may not');
});

test('a nested collection takes the parent id (required on create); scopes choose the tools, in order', () => {
  const catalogue = catalogueOf(collections, limits);
  assert.equal(catalogueOf(collections, limits), catalogue, 'made once per registry');
  const tools = toolsFor(catalogue, caller(['leaves:write', 'plants:read']));
  assert.deepEqual(tools.map((t) => t.name), ['list_plants', 'get_plants', 'create_leaves', 'update_leaves', 'delete_leaves']);
  assert.deepEqual(tools.find((t) => t.name === 'create_leaves')!.inputSchema.required, ['plant_id']);
  assert.deepEqual(toolsFor(catalogue, caller([])), []);
});
