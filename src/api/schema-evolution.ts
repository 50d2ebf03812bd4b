import { createHash } from 'node:crypto';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { CollectionModel, CollectionRegistry, ConvertTarget, MigrationStep } from '../contract/collections.js';
import type { Store } from '../platform/store/store.js';
import { write } from '../platform/store/write-path.js';
import { readSettingsStartingWith, writeSettingIn } from '../platform/store/settings.js';
import { countRecordRows, readDocBatch, rewriteRecordRows, RowsChanged, type RewrittenRow } from './store/record-migration.js';
import { mirrorColumnsOf } from './records.js';
import { collectionTableExists, mirrorColumnsInPlace } from './store/collection-tables.js';
import { dropSearchIndex, restoreSearchIndex } from './store/search-index.js';
import { MigrationRefused, SchemaChangesRefused } from './schema-refusals.js';

export { MigrationRefused, SchemaChangesRefused } from './schema-refusals.js';

// Schema evolution (docs/configuration.md, Changing the schema). gatehouse keeps the schema each
// collection was last served with (a setting per collection). At start, `serve` compares the
// config with it: safe changes are taken and logged; a change that would strand stored records
// stops the server with one line per change. `gatehouse migrate` applies the declared migrations
// (a field's `renamedFrom`, a collection's `migrations:`), in batches that each commit: a run that
// is killed resumes where it stopped, because every step is written so that it changes only the
// records it has not changed yet.

/** What is compared between two starts: the record shape and who sees the records. */
interface ServedSchema {
  properties: Record<string, unknown>;
  /** The schema's other rules about the whole record (allOf, patternProperties, …), annotations left out. */
  rest: unknown;
  required: string[];
  closed: boolean;
  parent: string | null;
  access: string;
  filters: string[];
  sort: string[];
  search: string[];
}

/** A difference between the served schema and the config. */
export interface SchemaChange {
  collection: string;
  field: string | null;
  /** Taken without a migration: nothing stored breaks. */
  safe: boolean;
  /** Refused by `serve`, taken by `gatehouse migrate --accept-access-change` (a change of who sees the records). */
  acceptedByMigrate: boolean;
  /** What changes, or what would break. */
  text: string;
  records: number;
  /** How to make the change: the migration to declare. */
  fix: string | null;
}

/** A declared migration step not yet applied, with what it would do. */
export interface StepPlan {
  collection: string;
  step: MigrationStep;
  description: string;
  /** Records it would change (null: not counted, `gatehouse migrate` counts while it applies). */
  records: number | null;
  /** Records whose value does not convert, with `onError: fail` (the first ones, and how many in all). */
  failures: { id: string; value: unknown }[];
  failed: number;
  /** The text of the served schema it applies over ('' for none): where it is recorded as done. */
  over: string;
}

export interface SchemaPlan {
  changes: SchemaChange[];
  steps: StepPlan[];
}

const SCHEMA_KEY = 'collection.schema.';
const APPLIED_KEY = 'collection.migration.';
/** Records per transaction of `gatehouse migrate` (its --batch), and per read of a plan's scan. */
export const MIGRATION_BATCH = 10_000;
const FAILURES_SHOWN = 10;

const ANNOTATIONS = new Set(['description', 'title', 'examples', 'example', 'renamedFrom', '$comment']);

/**
 * A schema without what only documents it, keys in order: two schemas that differ only there are
 * the same. Annotation keywords go only where they are keywords (a property named `title` inside a
 * `properties` map stays).
 */
function rules(schema: unknown, isMap = false): unknown {
  if (Array.isArray(schema)) return schema.map((s) => rules(s));
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(schema).sort()) {
    if (!isMap && ANNOTATIONS.has(key)) continue;
    const mapOfSchemas = !isMap && (key === 'properties' || key === 'patternProperties' || key === '$defs' || key === 'definitions' || key === 'dependentSchemas');
    out[key] = rules((schema as Record<string, unknown>)[key], mapOfSchemas);
  }
  return out;
}

/** A stable text of a value: keys in order (a step written with its keys in another order is the same step). */
function stableText(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableText).join(',')}]`;
  if (value && typeof value === 'object') return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${stableText((value as Record<string, unknown>)[k])}`).join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

function servedSchemaOf(model: CollectionModel): ServedSchema {
  return {
    properties: Object.fromEntries(Object.entries(model.properties).map(([f, p]) => [f, rules(p)])),
    rest: rules(Object.fromEntries(Object.entries(model.schema).filter(([k]) => !['properties', 'required', 'additionalProperties', 'type'].includes(k)))),
    required: Array.isArray(model.schema.required) ? [...(model.schema.required as string[])].sort() : [],
    closed: model.schema.additionalProperties === false,
    parent: model.parent?.collection ?? null,
    access: model.access,
    filters: model.filters,
    sort: model.sort,
    search: model.search,
  };
}

/**
 * Where a step is recorded as done: per collection, step and the schema it was applied over (the
 * served schema's text), so that a step declared again over another schema (a field converted back
 * and forth) runs again.
 */
const stepId = (collection: string, step: MigrationStep, servedText: string) =>
  `${APPLIED_KEY}${collection}.${createHash('sha256').update(`${stableText(step)}\n${servedText}`).digest('hex').slice(0, 16)}`;

export function describeStep(step: MigrationStep): string {
  if ('rename' in step) return `rename ${step.rename.from} to ${step.rename.to}`;
  if ('convert' in step) return `convert ${step.convert.field} to ${step.convert.to} (values that do not convert: ${step.convert.onError})`;
  if ('default' in step) return `set ${step.default.field} to ${JSON.stringify(step.default.value)} where it is missing`;
  return `drop ${step.drop}`;
}

/** The fields a step reads or writes. */
function fieldsOf(step: MigrationStep): string[] {
  if ('rename' in step) return [step.rename.from, step.rename.to];
  if ('convert' in step) return [step.convert.field];
  if ('default' in step) return [step.default.field];
  return [step.drop];
}

/** A stored value as the target type, or undefined where it does not convert. */
export function convertValue(value: unknown, to: ConvertTarget): unknown {
  switch (to) {
    case 'string':
      return typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;
    case 'number':
    case 'integer': {
      const n = typeof value === 'number' ? value : typeof value === 'string' && /^\s*-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(value) ? Number(value) : NaN;
      if (!Number.isFinite(n)) return undefined;
      return to === 'integer' && !Number.isSafeInteger(n) ? undefined : n;
    }
    case 'boolean':
      if (typeof value === 'boolean') return value;
      if (value === 1 || value === 0) return value === 1;
      if (typeof value === 'string' && /^(true|false|1|0)$/i.test(value.trim())) return /^(true|1)$/i.test(value.trim());
      return undefined;
    case 'date-time': {
      // RFC 3339 only (Date.parse takes "foo 7" and rolls 2020-02-30 over into March).
      const m = typeof value === 'string' ? /^(\d{4})-(\d\d)-(\d\d)(?:[Tt ](\d\d):(\d\d)(?::(\d\d)(?:\.\d+)?)?([Zz]|[+-]\d\d:\d\d))?$/.exec(value.trim()) : null;
      if (!m || (m[4] !== undefined && m[7] === undefined)) return undefined;
      const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
      if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return undefined;
      if (m[4] !== undefined && (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6] ?? 0) > 59)) return undefined;
      const time = Date.parse(m[4] === undefined ? `${m[1]}-${m[2]}-${m[3]}T00:00:00Z` : (value as string).trim().replace(' ', 'T'));
      return Number.isFinite(time) ? new Date(time).toISOString() : undefined;
    }
  }
}

/** Whether a value fits a field's schema as the config now declares it. */
type FieldCheck = (field: string, value: unknown) => boolean;

function fieldChecker(ajv: Ajv, model: CollectionModel): FieldCheck {
  const compiled = new Map<string, ValidateFunction>();
  return (field, value) => {
    let check = compiled.get(field);
    if (!check) compiled.set(field, (check = ajv.compile((model.properties[field] ?? {}) as object)));
    return check(value);
  };
}

function newAjv(): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: false });
  addFormats.default(ajv);
  return ajv;
}

type Doc = Record<string, unknown>;

/**
 * Applies one step to a document in place. Returns whether it changed the document; `failed` is
 * the value that did not convert under `onError: fail` (the document is then left as it was).
 */
function applyStep(doc: Doc, step: MigrationStep, model: CollectionModel, fits: FieldCheck): { changed: boolean; failed?: unknown } {
  if ('rename' in step) {
    const { from, to } = step.rename;
    if (!(from in doc)) return { changed: false };
    // A record holding both names with different values: which one is meant is not ours to guess.
    if (to in doc && JSON.stringify(doc[to]) !== JSON.stringify(doc[from])) return { changed: false, failed: { [from]: doc[from], [to]: doc[to] } };
    doc[to] = doc[from];
    delete doc[from];
    return { changed: true };
  }
  if ('convert' in step) {
    const { field, to, onError } = step.convert;
    const value = doc[field];
    // A value that fits the field's schema stays; another is converted, and must fit then.
    if (value === undefined || fits(field, value)) return { changed: false };
    const converted = value === null ? undefined : convertValue(value, to);
    if (converted !== undefined && converted !== value && fits(field, converted)) doc[field] = converted;
    else if (onError === 'null') doc[field] = null;
    else if (onError === 'default') doc[field] = model.properties[field]?.default;
    else return { changed: false, failed: value };
    return { changed: true };
  }
  if ('default' in step) {
    if (step.default.field in doc) return { changed: false };
    doc[step.default.field] = step.default.value;
    return { changed: true };
  }
  if (!(step.drop in doc)) return { changed: false };
  delete doc[step.drop];
  return { changed: true };
}

/** A check of each stored document against one change of the schema. */
interface DocCheck {
  change: Omit<SchemaChange, 'records'>;
  /** The check of a field no longer declared: met by a rename from it or a drop of it. */
  removedField?: string;
  /** How the change is logged when no record breaks. */
  taken: string;
  breaks: (doc: Doc) => boolean;
}

/** The changes between the served schema and the model, each with the check that counts the records it strands. */
function diff(model: CollectionModel, old: ServedSchema, now: ServedSchema, ajv: Ajv, rows: number, pending: MigrationStep[]): { checks: DocCheck[]; notes: SchemaChange[] } {
  const checks: DocCheck[] = [];
  const notes: SchemaChange[] = [];
  const collection = model.name;
  const note = (field: string | null, text: string, safe = true, acceptedByMigrate = false, fix: string | null = null) =>
    notes.push({ collection, field, safe, acceptedByMigrate, text, records: rows, fix });
  const check = (field: string | null, text: string, fix: string, taken: string, breaks: (doc: Doc) => boolean, removedField?: string) =>
    checks.push({ change: { collection, field, safe: false, acceptedByMigrate: false, text, fix }, taken, breaks, removedField });

  for (const field of Object.keys(old.properties)) {
    if (field in now.properties) continue;
    if (now.closed)
      check(field, `the schema no longer declares ${field}, which stored records hold: they could not be saved again`, `give its new name \`renamedFrom: ${field}\`, or declare \`- {drop: ${field}}\` under migrations`, `${field} is no longer declared; no stored record holds it`, (doc) => field in doc, field);
    else note(field, `${field} is no longer declared (extra fields are allowed: stored values stay)`);
  }
  for (const [field, property] of Object.entries(now.properties)) {
    const required = now.required.includes(field);
    if (!(field in old.properties)) {
      if (required)
        check(field, `${field} is new and required, and stored records have none`, `declare \`- {default: {field: ${field}, value: …}}\` under migrations, or make it optional`, `new required field ${field}; every stored record has it`, (doc) => !(field in doc));
      // Its values come from a rename, or from before (a field once declared, or allowed as extra):
      // they must fit, unless they are renamed from a field with exactly these rules.
      const from = pending.find((s) => 'rename' in s && s.rename.to === field) as { rename: { from: string } } | undefined;
      const sameRules = from !== undefined && JSON.stringify(old.properties[from.rename.from]) === JSON.stringify(property);
      if (!sameRules) {
        const valid = ajv.compile(property as object);
        check(
          field,
          `${field} is new, and stored values of it${from ? ` (renamed from ${from.rename.from})` : ''} do not fit its schema ${JSON.stringify(property)}`,
          `declare \`- {convert: {field: ${field}, to: …, onError: fail|null|default}}\` under migrations`,
          required ? '' : `new optional field ${field}`,
          (doc) => doc[field] !== undefined && !valid(doc[field]),
        );
      } else if (!required) note(field, `new optional field ${field} (renamed from ${from.rename.from})`);
      continue;
    }
    if (JSON.stringify(old.properties[field]) !== JSON.stringify(property)) {
      const valid = ajv.compile(property as object);
      const converted = pending.some((s) => 'convert' in s && s.convert.field === field);
      check(
        field,
        `${field} is now ${JSON.stringify(property)}, and stored values do not fit it`,
        converted
          ? 'the declared convert leaves them as they are: correct those records, or choose onError: default (or null)'
          : `declare \`- {convert: {field: ${field}, to: …, onError: fail|null|default}}\` under migrations`,
        `${field} is now ${JSON.stringify(property)}; every stored value fits it`,
        (doc) => doc[field] !== undefined && !valid(doc[field]),
      );
    }
    if (required && !old.required.includes(field))
      check(field, `${field} is now required, and stored records have none`, `declare \`- {default: {field: ${field}, value: …}}\` under migrations`, `${field} is now required; every stored record has it`, (doc) => !(field in doc));
  }
  if (!old.closed && now.closed)
    check(
      null,
      'fields the schema does not declare are no longer allowed, and stored records hold some',
      'declare `renamedFrom` on their new names, or `- {drop: field}` under migrations',
      'fields the schema does not declare are no longer allowed; no stored record holds any',
      (doc) => Object.keys(doc).some((k) => !(k in now.properties)),
    );
  if (JSON.stringify(old.rest) !== JSON.stringify(now.rest)) {
    const valid = model.validate;
    check(null, "the schema's rules about the whole record changed, and stored records break them", 'declare the migrations that make them fit (rename, convert, default, drop)', "the schema's rules about the whole record changed; every stored record fits them", (doc) => !valid(doc));
  }
  if (old.parent !== now.parent) {
    if (rows > 0) note(null, `its parent changed from ${old.parent ?? 'none'} to ${now.parent ?? 'none'}: the stored records belong to records of ${old.parent ?? 'no collection'}`, false, false, 'keep the parent; a collection under another name starts empty');
    else note(null, `parent is now ${now.parent ?? 'none'}`);
  }
  if (old.access !== now.access) {
    if (rows > 0) note(null, `access changed from ${old.access} to ${now.access}: who may read its stored records (and their past events) changes`, false, true, 'run `gatehouse migrate --accept-access-change` to accept it');
    else note(null, `access is now ${now.access}`);
  }
  const added = (list: 'filters' | 'sort' | 'search', words: string) => {
    const fresh = now[list].filter((f) => !old[list].includes(f));
    if (fresh.length) note(null, `${words} ${fresh.join(', ')}`);
  };
  added('filters', 'new filters:');
  added('sort', 'new sort fields:');
  added('search', 'now searched by q=:');
  return { checks, notes };
}

/**
 * A collection with records and no served schema (a database from before schema evolution): its
 * records are checked against the config as it is, so that no start serves a value of a type the
 * schema does not declare.
 */
function baseline(model: CollectionModel, now: ServedSchema, ajv: Ajv): { checks: DocCheck[]; notes: SchemaChange[] } {
  const collection = model.name;
  const checks: DocCheck[] = [];
  const taken = '';
  const check = (field: string | null, text: string, fix: string, breaks: (doc: Doc) => boolean) =>
    checks.push({ change: { collection, field, safe: false, acceptedByMigrate: false, text, fix }, taken, breaks });
  for (const [field, property] of Object.entries(now.properties)) {
    const valid = ajv.compile(property as object);
    check(field, `stored values of ${field} do not fit its schema ${JSON.stringify(property)}`, `declare \`- {convert: {field: ${field}, to: …, onError: fail|null|default}}\` under migrations`, (doc) => doc[field] !== undefined && !valid(doc[field]));
    if (now.required.includes(field))
      check(field, `${field} is required, and stored records have none`, `declare \`- {default: {field: ${field}, value: …}}\` under migrations`, (doc) => !(field in doc));
  }
  if (now.closed) {
    const undeclared = new Set<string>();
    checks.push({
      change: {
        collection,
        field: null,
        safe: false,
        acceptedByMigrate: false,
        // Read after the scan: it names the fields found.
        get text() {
          return `stored records hold fields the schema does not declare (${[...undeclared].slice(0, 5).join(', ')}${undeclared.size > 5 ? ', …' : ''})`;
        },
        fix: 'declare `renamedFrom` on their new names, or `- {drop: field}` under migrations',
      },
      taken,
      breaks: (doc) => {
        let found = false;
        for (const k of Object.keys(doc))
          if (!(k in now.properties)) {
            undeclared.add(k);
            found = true;
          }
        return found;
      },
    });
  }
  return { checks, notes: [] };
}

/** Where every collection stands against the config: the changes, and the declared steps still to apply. */
/**
 * `count: false` (`gatehouse migrate`): the records are not read when nothing in the plan needs
 * them read — every check is met by a declared step (a field no longer declared is renamed or
 * dropped) and no step converts; the steps are then counted while they are applied.
 */
export async function planSchemaChanges(store: Store, collections: CollectionRegistry, { count = true }: { count?: boolean } = {}): Promise<SchemaPlan> {
  const served = await readSettingsStartingWith(store, SCHEMA_KEY);
  const applied = await readSettingsStartingWith(store, APPLIED_KEY);
  const ajv = newAjv();
  const plan: SchemaPlan = { changes: [], steps: [] };
  for (const model of collections.values()) {
    const oldText = served.get(SCHEMA_KEY + model.name);
    const now = servedSchemaOf(model);
    const over = oldText ?? '';
    const pending = model.migrations.filter((step) => !applied.has(stepId(model.name, step, over)));
    if (oldText === JSON.stringify(now) && pending.length === 0) continue;
    const rows = (await collectionTableExists(store, model)) ? await countRecordRows(store, model) : 0;
    const old = oldText ? (JSON.parse(oldText) as ServedSchema) : null;
    if (!old) plan.changes.push({ collection: model.name, field: null, safe: true, acceptedByMigrate: false, text: rows ? `schema recorded (${rows} records)` : 'new collection', records: rows, fix: null });
    const { checks, notes } = old ? diff(model, old, now, ajv, rows, pending) : rows > 0 ? baseline(model, now, ajv) : { checks: [], notes: [] };
    plan.changes.push(...notes);
    const met = (c: DocCheck) =>
      c.removedField !== undefined && pending.some((s) => ('rename' in s && s.rename.from === c.removedField) || ('drop' in s && s.drop === c.removedField));
    const read = count || checks.some((c) => !met(c)) || pending.some((s) => 'convert' in s);
    const steps: StepPlan[] = pending.map((step) => ({ collection: model.name, step, description: describeStep(step), records: rows > 0 && !read ? null : 0, failures: [], failed: 0, over }));
    const broken = checks.map(() => 0);
    const fits = fieldChecker(ajv, model);
    if (rows > 0 && read && (checks.length || steps.length)) {
      await scan(store, model, (doc, id) => {
        steps.forEach((s) => {
          const { changed, failed } = applyStep(doc, s.step, model, fits);
          if (changed) s.records!++;
          if (failed !== undefined && s.failed++ < FAILURES_SHOWN) s.failures.push({ id, value: failed });
        });
        checks.forEach((c, i) => {
          if (c.breaks(doc)) broken[i]++;
        });
      });
    }
    checks.forEach((c, i) => {
      // A baseline check that passes says nothing (its `taken` is empty).
      if (broken[i] > 0 || c.taken) plan.changes.push({ ...c.change, records: broken[i], safe: broken[i] === 0, text: broken[i] === 0 ? c.taken : c.change.text });
    });
    plan.steps.push(...steps);
  }
  return plan;
}

async function scan(store: Store, model: CollectionModel, each: (doc: Doc, id: string) => void): Promise<void> {
  let last = '';
  for (;;) {
    const batch = await readDocBatch(store, model, last, MIGRATION_BATCH);
    if (batch.length === 0) return;
    for (const row of batch) each(JSON.parse(row.doc) as Doc, row.id);
    last = batch[batch.length - 1].id;
  }
}

/** Changes `serve` refuses: one line each, with the fix. */
export function refusedChanges(plan: SchemaPlan): string[] {
  const lines = plan.changes.filter((c) => !c.safe).map((c) => `${c.collection}${c.field ? `.${c.field}` : ''}: ${c.text} (${c.records} stored record${c.records === 1 ? '' : 's'}); fix: ${c.fix}`);
  for (const s of plan.steps)
    if ((s.records ?? 1) > 0 || s.failed > 0) lines.push(`${s.collection}: migration "${s.description}" is declared and not applied (${s.records} record${s.records === 1 ? '' : 's'} to change); fix: run \`gatehouse migrate\` (--dry-run shows the plan)`);
  return lines;
}

/** The safe changes, as `serve` logs them. */
export function takenChanges(plan: SchemaPlan): string[] {
  return plan.changes.filter((c) => c.safe).map((c) => `schema of ${c.collection}: ${c.text}`);
}

/**
 * At `serve`: the safe changes are taken (their schemas recorded) and returned for the log; any
 * other change throws SchemaChangesRefused and records nothing.
 */
export async function adoptSchema(store: Store, collections: CollectionRegistry): Promise<string[]> {
  const plan = await planSchemaChanges(store, collections);
  const refused = refusedChanges(plan);
  if (refused.length) throw new SchemaChangesRefused(refused);
  // Steps that change no record (a rename already done, a default nobody needs) are recorded as applied.
  for (const s of plan.steps) await recordStep(store, collections.get(s.collection)!, s, 0);
  await recordSchemas(store, collections, plan);
  return takenChanges(plan);
}

async function recordSchemas(store: Store, collections: CollectionRegistry, plan: SchemaPlan): Promise<void> {
  const touched = new Set([...plan.changes.map((c) => c.collection), ...plan.steps.map((s) => s.collection)]);
  for (const name of touched) {
    const model = collections.get(name)!;
    const text = JSON.stringify(servedSchemaOf(model));
    await write(store, async (tx) => {
      await writeSettingIn(tx, SCHEMA_KEY + name, text);
      // The steps declared with this schema are met by it: the next start has nothing to do for them.
      for (const step of model.migrations) await writeSettingIn(tx, stepId(name, step, text), JSON.stringify({ step, carried: true }));
    });
  }
}

async function recordStep(store: Store, model: CollectionModel, s: StepPlan, records: number): Promise<void> {
  await write(store, async (tx) => {
    await writeSettingIn(tx, stepId(model.name, s.step, s.over), JSON.stringify({ step: s.step, applied_at: new Date().toISOString(), records }));
    // One event per applied step, not one per record: a million `record.updated` would flood every feed and webhook.
    // Without the count: in an `owner` collection it would tell each reader how many records all owners have.
    if (records > 0) tx.emit({ type: 'collection.migrated', collection: model.name, record_id: null, owner: null, actor: null, data: JSON.stringify({ migration: s.step, description: s.description }) });
  });
}

export interface Progress {
  collection: string;
  done: number;
  total: number;
}

/**
 * `gatehouse migrate`: applies the declared steps still pending, collection by collection, in
 * batches that each commit (progress after each), then records the steps and the new schemas.
 * Runs before the tables are synced with the config: a mirror column added or made again for a
 * new type is then filled from documents that already have their new shape.
 * Refuses, changing nothing, while a change is not covered by a migration or a value does not convert.
 */
/**
 * Throws MigrationRefused while a change is not covered by a migration, a step cannot apply to a
 * record, or (without `acceptAccess`) a collection's access changes.
 */
export function assertPlanApplies(plan: SchemaPlan, acceptAccess = false): void {
  const blocking = refusedChanges({ changes: plan.changes.filter((c) => !(c.acceptedByMigrate && acceptAccess)), steps: [] });
  const failing = plan.steps.filter((s) => s.failed > 0).map((s) => `${s.collection}: "${s.description}": ${s.failed} record${s.failed === 1 ? '' : 's'} the step cannot apply to (a value that does not convert, or both names with different values): ${s.failures.map((f) => `${f.id} (${JSON.stringify(f.value)})`).join(', ')}${s.failed > s.failures.length ? ', …' : ''}; fix: correct them, or choose onError: null or default`);
  if (blocking.length || failing.length) throw new MigrationRefused([...blocking, ...failing]);
}

export async function applySchemaPlan(
  store: Store,
  collections: CollectionRegistry,
  plan: SchemaPlan,
  progress: (p: Progress) => void = () => undefined,
  batchSize = MIGRATION_BATCH,
): Promise<{ records: number }> {
  // The caller has checked the plan (assertPlanApplies) before anything was changed.
  let records = 0;
  for (const model of collections.values()) {
    const steps = plan.steps.filter((s) => s.collection === model.name);
    if (steps.some((s) => s.records !== 0)) {
      const total = await countRecordRows(store, model);
      const changedBy = steps.map(() => 0);
      const fits = fieldChecker(newAjv(), model);
      // Only the mirror columns of the fields the steps touch change; the search index is built
      // again from the new documents by the sync that follows.
      const touched = new Set(steps.flatMap((s) => fieldsOf(s.step)));
      const mirrors = (await mirrorColumnsInPlace(store, model)).filter((column) => model.columns.some((c) => c.column === column && touched.has(c.field)));
      await dropSearchIndex(store, model);
      let last = '';
      let done = 0;
      const now = new Date().toISOString();
      let retries = 0;
      // A migration that stops part way leaves the search index built again, so that `q=` keeps working.
      try {
        for (;;) {
          const batch = await readDocBatch(store, model, last, batchSize);
          if (batch.length === 0) break;
          const rewritten: RewrittenRow[] = [];
          const batchChanged = steps.map(() => 0);
          for (const row of batch) {
            const doc = JSON.parse(row.doc) as Doc;
            let changed = false;
            steps.forEach((s, i) => {
              const result = applyStep(doc, s.step, model, fits);
              if (result.failed !== undefined) throw new MigrationRefused([`${model.name}: "${s.description}": record ${row.id} holds ${JSON.stringify(result.failed)}, which the step cannot apply to (written since the plan); the records before it are migrated: correct it and run \`gatehouse migrate\` again`]);
              if (result.changed) (changed = true), batchChanged[i]++;
            });
            if (changed) rewritten.push({ id: row.id, version: Number(row.version), doc: JSON.stringify(doc), columns: mirrorColumnsOf(model, doc) });
          }
          if (rewritten.length) {
            try {
              await write(store, (tx) => rewriteRecordRows(tx, model, rewritten, now, mirrors));
            } catch (e) {
              // A record of the batch was written meanwhile: nothing of the batch was written; read it again.
              if (!(e instanceof RowsChanged) || ++retries > 100) throw e;
              continue;
            }
          }
          batchChanged.forEach((n, i) => (changedBy[i] += n));
          records += rewritten.length;
          done += batch.length;
          last = batch[batch.length - 1].id;
          progress({ collection: model.name, done, total: Math.max(total, done) });
        }
      } catch (e) {
        await restoreSearchIndex(store, model).catch(() => undefined);
        throw e;
      }
      for (const [i, s] of steps.entries()) {
        s.records = changedBy[i];
        await recordStep(store, model, s, changedBy[i]);
      }
    } else {
      for (const s of steps) await recordStep(store, model, s, 0);
    }
  }
  await recordSchemas(store, collections, plan);
  return { records };
}

/** The migrations applied so far, oldest first: what `gatehouse migrate` lists. */
export async function appliedMigrations(store: Store): Promise<{ collection: string; migration: MigrationStep; applied_at: string; records: number }[]> {
  const rows = await readSettingsStartingWith(store, APPLIED_KEY);
  return [...rows]
    .map(([key, value]) => ({ collection: key.slice(APPLIED_KEY.length).replace(/\.[0-9a-f]{16}$/, ''), ...(JSON.parse(value) as { step: MigrationStep; applied_at: string; records: number; carried?: boolean }) }))
    .filter((m) => !m.carried)
    .map(({ collection, step, applied_at, records }) => ({ collection, migration: step, applied_at, records }))
    .sort((a, b) => a.applied_at.localeCompare(b.applied_at));
}
