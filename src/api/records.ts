import { createHash } from 'node:crypto';
import type { AppContext } from '../contract/context.js';
import type { Caller } from '../contract/caller.js';
import { ApiError, badRequest, forbidden, gone, notFound, preconditionFailed } from '../platform/http/errors.js';
import { write, type On, type WriteTx } from '../platform/store/write-path.js';
import type { CollectionModel } from '../contract/collections.js';
import { normalizeDateTime, type ListQuery, type RecordView } from './query.js';
import type { Links } from './links.js';
import { parentReference, requireObject, splitServerFields, validateDocument, type Document } from './validation.js';
import { scopeName } from '../contract/scope-name.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { childRowsOf, deleteRecordTree, recordRowsByIds, findTombstone, insertRecordRow, readRecordRow, updateRecordRow, type RecordRow } from './store/records.js';
import { findIdempotencyKey, insertIdempotencyKey } from './store/idempotency-keys.js';
import { fullSort, keysetValues, listRecordRows } from './store/list-plans.js';
import { insertRecordRows } from './store/bulk-insert.js';
import { newTimeOrderedId } from '../platform/crypto/secrets.js';
import { jsonString } from '../platform/http/json-text.js';

export type { RecordRow } from './store/records.js';

// The resource service: what "list / read / create / replace / patch / delete a record of this
// collection for this caller" means, independent of HTTP. Every write is one transaction.

export type Resource = Record<string, unknown>;

/** What a create produced: the record, or — for a repeated Idempotency-Key — the first one (null if since deleted). */
export interface Created {
  id: string;
  row: RecordRow | null;
  replayed: boolean;
}

/** Where a request addressed a record: the collection, and the parent id when the URL was nested. */
export interface Address {
  model: CollectionModel;
  /** The parent id from a nested URL (/zoos/{parentId}/animals/...), else null. */
  parentId: string | null;
}

/** The x_<field> columns of a document: its filter and sort fields as the columns hold them (booleans 0/1, date-times in UTC). */
export function mirrorColumnsOf(model: CollectionModel, doc: Document): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const c of model.columns) {
    const v = doc[c.field];
    values[c.column] =
      v === undefined || v === null || typeof v === 'object'
        ? null
        : typeof v === 'boolean'
          ? Number(v)
          : c.format === 'date-time' && typeof v === 'string'
            ? (normalizeDateTime(v) ?? v)
            : v;
  }
  return values;
}

/** A record as GET shows it, as JSON text (Records.resourceJson; an owner's export, api/owned-records.ts). */
export function recordJson(links: Links, model: CollectionModel, row: RecordRow): string {
  const doc = row.doc.length > 2 ? `${row.doc.slice(1, -1)},` : '';
  const parent = model.parent ? `${jsonString(model.parent.field)}:${row.parent_id === null ? 'null' : jsonString(row.parent_id)},` : '';
  return (
    `{"id":${jsonString(row.id)},${doc}${parent}"owner":${jsonString(row.owner)},` +
    `"created_at":${jsonString(row.created_at)},"updated_at":${jsonString(row.updated_at)},` +
    `"link":${links.forRecordJson(model, row.id, row.parent_id)}}`
  );
}

export class Records {
  constructor(
    private readonly ctx: AppContext,
    readonly links: Links,
  ) {}

  etag(row: Pick<RecordRow, 'version' | 'id'>): string {
    return `"${row.version}"`;
  }

  toResource(model: CollectionModel, row: RecordRow): Resource {
    const out: Resource = { id: row.id, ...(JSON.parse(row.doc) as Document) };
    if (model.parent) out[model.parent.field] = row.parent_id;
    out.owner = row.owner;
    out.created_at = row.created_at;
    out.updated_at = row.updated_at;
    out.link = this.links.forRecord(model, row.id, row.parent_id);
    return out;
  }

  /**
   * The same representation as toResource, as JSON text, built around the stored document text
   * instead of parsing and re-serialising it (reads are the hot path). Key order is the same.
   */
  resourceJson(model: CollectionModel, row: RecordRow): string {
    return recordJson(this.links, model, row);
  }

  private visible(model: CollectionModel, caller: Caller, owner: string): boolean {
    return model.access === 'shared' || owner === caller.subject;
  }

  /**
   * 404, or 410 when the id belonged to a record that was deleted. Inside a transaction it must
   * read through that transaction: SQLite has one connection, so reading outside would wait forever.
   */
  private async missing(model: CollectionModel, id: string, on: On = this.ctx.store): Promise<never> {
    const deletedAt = await findTombstone(on, model.name, id);
    if (deletedAt !== null) throw gone(`This ${model.name} record was deleted`, { id: `deleted at ${new Date(deletedAt).toISOString()}` });
    throw notFound(`No such ${model.name} record`, { id: 'does not exist' });
  }

  /** The parent a nested URL or a flat body names must exist and be visible to the caller. */
  async requireParent(model: CollectionModel, caller: Caller, parentId: string, on: On = this.ctx.store): Promise<RecordRow> {
    const parentModel = this.ctx.collections.get(model.parent!.collection)!;
    const parent = await readRecordRow(on, parentModel, parentId);
    if (!parent) return this.missing(parentModel, parentId, on);
    if (!this.visible(parentModel, caller, parent.owner))
      throw forbidden(`The ${parentModel.name} record belongs to another owner`, { [model.parent!.field]: 'not accessible with this token' });
    return parent;
  }

  /** Reads one record the caller may see, checking the nested parent when the URL had one. */
  async read(address: Address, caller: Caller, id: string): Promise<RecordRow> {
    const { model, parentId } = address;
    if (parentId !== null) await this.requireParent(model, caller, parentId);
    const row = await readRecordRow(this.ctx.store, model, id);
    if (!row || (parentId !== null && row.parent_id !== parentId)) return this.missing(model, id);
    if (!this.visible(model, caller, row.owner))
      throw forbidden(`This ${model.name} record belongs to another owner`, { id: 'not accessible with this token' });
    return row;
  }

  /**
   * A page of the records the caller may see, with the total (null with count=none) and, when
   * paging by keyset, the cursors of the next page (`after`) and of the page before (`before`).
   */
  async list(address: Address, caller: Caller, query: ListQuery): Promise<{ rows: RecordRow[]; total: number | null; next: string | null; prev: string | null }> {
    const { model } = address;
    // docs/api.md: /zoos/{id}/animals and /animals?zoo_id={id} mean the same, statuses included.
    const parentField = model.parent?.field;
    const parentEq = query.conditions.find((c) => c.field === parentField && c.op === 'eq');
    const parentId = address.parentId ?? (parentEq ? String(parentEq.values[0]) : null);
    if (parentId !== null) await this.requireParent(model, caller, parentId);
    const conditions = query.conditions.filter((c) => c !== parentEq);
    const keyset = query.paging === 'cursor';
    const keys = fullSort(query.sort);
    // `before`: the rows nearest the position going backwards — the same keyset condition in the
    // reversed order (which also reverses where NULLs go: first ascending ↔ last descending), one
    // row more to know whether a page comes before them, then put back in the asked order.
    const backwards = query.before !== null;
    const position = query.after ?? query.before;
    const cursor = position === null ? null : await decodeCursor(this.ctx.keys, model.name, keys, position, keys.length, backwards ? 'before' : 'after');
    const { rows, total } = await listRecordRows(this.ctx.store, model, {
      owner: model.access === 'owner' ? caller.subject : null,
      parentId,
      conditions,
      sort: backwards ? query.sort.map((k) => ({ field: k.field, order: k.order === 'asc' ? 'desc' : 'asc' })) : query.sort,
      search: query.search,
      rank: query.search !== null && !query.sorted,
      after: cursor,
      limit: backwards ? query.limit + 1 : query.limit,
      offset: query.offset,
      count: query.count === 'exact',
    });
    const earlier = backwards && rows.length > query.limit;
    if (backwards) {
      if (earlier) rows.length = query.limit;
      rows.reverse();
    }
    const at = (row: RecordRow) => encodeCursor(this.ctx.keys, model.name, keys, keysetValues(model, query.sort, row));
    // next: while forward pages are full (as offset paging does); after a backward page, always —
    // the rows it was taken before come next. prev: on any page but the first.
    const next = keyset && rows.length > 0 && (backwards || rows.length === query.limit) ? await at(rows[rows.length - 1]) : null;
    const prev = keyset && rows.length > 0 && (backwards ? earlier : query.after !== null) ? await at(rows[0]) : null;
    return { rows, total, next, prev };
  }

  /** The JSON array of a list page: whole records, or `fields=` of them, with `expand=` related records. */
  async renderList(address: Address, caller: Caller, query: ListQuery, rows: RecordRow[]): Promise<string> {
    const { model } = address;
    if (query.fields === null && query.expand === null) {
      // One flat string, as join makes it: '[' + … + ']' would be a rope that Fastify's measuring
      // of the body (Buffer.byteLength) copies whole into a flat string first (12 KB per page of 20).
      const items = rows.map((row) => this.resourceJson(model, row));
      if (items.length === 0) return '[]';
      items[0] = `[${items[0]}`;
      items[items.length - 1] += ']';
      return items.join(',');
    }
    return JSON.stringify(await this.shaped(model, caller, query, rows));
  }

  /** One record as `GET /v1/<collection>/<id>` shows it: whole, or `fields=` of it, with `expand=` related records. */
  async renderRecord(address: Address, caller: Caller, view: RecordView, row: RecordRow): Promise<string> {
    if (view.fields === null && view.expand === null) return this.resourceJson(address.model, row);
    return JSON.stringify((await this.shaped(address.model, caller, view, [row]))[0]);
  }

  /** Records with `fields=` and `expand=` applied: the same rules for a list page and for one record. */
  private async shaped(model: CollectionModel, caller: Caller, view: RecordView, rows: RecordRow[]): Promise<Resource[]> {
    const related = view.expand === null ? null : await this.expanded(model, caller, view.expand, rows);
    return rows.map((row) => {
      let out = this.toResource(model, row);
      if (view.fields !== null) out = Object.fromEntries(Object.entries(out).filter(([k]) => k === 'id' || k === 'link' || view.fields!.includes(k)));
      if (related) out[view.expand!] = related(row);
      return out;
    });
  }

  /** The related records of a page: one statement for the whole page; the related collection's read scope is required. */
  private async expanded(model: CollectionModel, caller: Caller, expand: string, rows: RecordRow[]): Promise<(row: RecordRow) => unknown> {
    const related = this.ctx.collections.get(expand === 'parent' ? model.parent!.collection : expand)!;
    if (!caller.scopes.has(scopeName(related.name, 'read')))
      throw forbidden(`This token cannot read ${related.name}`, { expand: `requires ${scopeName(related.name, 'read')}` });
    if (expand === 'parent') {
      const parents = await recordRowsByIds(this.ctx.store, related, [...new Set(rows.map((r) => r.parent_id).filter((id): id is string => id !== null))]);
      const byId = new Map(parents.filter((p) => this.visible(related, caller, p.owner)).map((p) => [p.id, this.toResource(related, p)]));
      return (row) => (row.parent_id === null ? null : (byId.get(row.parent_id) ?? null));
    }
    const children = await childRowsOf(
      this.ctx.store,
      related,
      rows.map((r) => r.id),
      related.access === 'owner' ? caller.subject : null,
      this.ctx.config.api.expandLimit,
    );
    const byParent = new Map<string, Resource[]>();
    for (const c of children) {
      const list = byParent.get(c.parent_id!) ?? [];
      list.push(this.toResource(related, c));
      byParent.set(c.parent_id!, list);
    }
    return (row) => byParent.get(row.id) ?? [];
  }

  /** Validates a create body; returns the document and the parent it belongs to. */
  prepareCreate(address: Address, body: unknown): { doc: Document; parentId: string | null } {
    const { model, parentId } = address;
    const input = requireObject(body);
    const { doc, detail } = splitServerFields(model, input, null, parentId !== null);
    let parent = parentId;
    if (parent === null) {
      try {
        parent = parentReference(model, input, model.parent !== null);
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        Object.assign(detail, e.detail);
      }
    }
    validateDocument(model, doc, detail);
    return { doc, parentId: parent };
  }

  /** Creates a record inside a write (a single create, or a chunk of a bulk job). */
  async insert(tx: WriteTx, model: CollectionModel, caller: Caller, doc: Document, parentId: string | null): Promise<RecordRow> {
    if (parentId !== null) await this.requireParent(model, caller, parentId, tx);
    const row = this.newRow(model, caller, doc, parentId, new Date().toISOString());
    await insertRecordRow(tx, model, row);
    this.emit(tx, 'record.created', model, row, caller);
    return row;
  }

  /** A record's event (docs/events.md): `data` is the record as GET shows it, null on delete. */
  private emit(tx: WriteTx, type: 'record.created' | 'record.updated', model: CollectionModel, row: RecordRow, caller: Caller): void {
    tx.emit({ type, collection: model.name, record_id: row.id, owner: row.owner, actor: caller.subject, data: this.resourceJson(model, row) });
  }

  /** A new record's row: a time-ordered id, version 1, the document and its mirror columns. */
  private newRow(model: CollectionModel, caller: Caller, doc: Document, parentId: string | null, now: string): RecordRow {
    return {
      id: newTimeOrderedId(),
      owner: caller.subject,
      parent_id: parentId,
      version: 1,
      created_at: now,
      updated_at: now,
      doc: JSON.stringify(doc),
      ...mirrorColumnsOf(model, doc),
    };
  }

  /**
   * Creates a record. With an Idempotency-Key, a repeat by the same subject with the same body
   * returns the first record's id instead (`replayed`), and another body with the key is a 400.
   */
  async create(address: Address, caller: Caller, body: unknown, idempotencyKey?: string): Promise<Created> {
    const { doc, parentId } = this.prepareCreate(address, body);
    const { model } = address;
    if (!idempotencyKey) {
      const row = await write(this.ctx.store, (tx) => this.insert(tx, model, caller, doc, parentId));
      return { id: row.id, row, replayed: false };
    }
    const bodyHash = createHash('sha256').update(`${model.name}\n${parentId ?? ''}\n${JSON.stringify(body)}`).digest('base64url');
    const earlier = await this.idempotent(caller, idempotencyKey, bodyHash);
    if (earlier) return earlier;
    try {
      const row = await write(this.ctx.store, async (tx) => {
        const created = await this.insert(tx, model, caller, doc, parentId);
        await insertIdempotencyKey(tx, { subject: caller.subject, key: idempotencyKey, collection: model.name, bodyHash, recordId: created.id }, Date.now());
        return created;
      });
      return { id: row.id, row, replayed: false };
    } catch (e) {
      // Two requests raced with the same key: the loser answers like a repeat.
      const raced = await this.idempotent(caller, idempotencyKey, bodyHash);
      if (raced) return raced;
      throw e;
    }
  }

  private async idempotent(caller: Caller, key: string, bodyHash: string): Promise<Created | null> {
    const seen = await findIdempotencyKey(this.ctx.store, caller.subject, key);
    if (!seen) return null;
    if (seen.bodyHash !== bodyHash)
      throw badRequest('Idempotency-Key reused with a different request', { 'idempotency-key': 'was used before for another request body' });
    const model = this.ctx.collections.get(seen.collection);
    const row = model ? await readRecordRow(this.ctx.store, model, seen.recordId) : null;
    return { id: seen.recordId, row, replayed: true };
  }

  /** PUT (whole representation) or PATCH (JSON merge patch, RFC 7396), validated after merging. */
  async update(address: Address, caller: Caller, id: string, body: unknown, mode: 'replace' | 'merge', ifMatch: string | undefined): Promise<RecordRow> {
    const { model, parentId } = address;
    const input = requireObject(body);
    return write(this.ctx.store, async (tx) => {
      const row = await this.readForWrite(tx, address, caller, id, ifMatch);
      const current = this.toResource(model, row);
      const { doc: changes, detail } = splitServerFields(model, input, current, parentId !== null);
      // A body with server-owned fields is refused before the parent is looked at, naming every bad field.
      // A merge patch is checked on the fields it sets (and the required ones): the rest is as stored.
      const touched = mode === 'merge' ? new Set(Object.keys(changes)) : undefined;
      if (Object.keys(detail).length) validateDocument(model, mode === 'replace' ? changes : mergePatch(JSON.parse(row.doc) as Document, changes), detail, touched);
      let newParent = row.parent_id;
      if (model.parent && parentId === null) {
        const ref = parentReference(model, input, mode === 'replace');
        if (ref !== null && ref !== row.parent_id) {
          await this.requireParent(model, caller, ref, tx);
          newParent = ref;
        }
      }
      const doc = mode === 'replace' ? changes : mergePatch(JSON.parse(row.doc) as Document, changes);
      validateDocument(model, doc, {}, touched);
      const updated: RecordRow = {
        ...row,
        parent_id: newParent,
        version: row.version + 1,
        updated_at: new Date().toISOString(),
        doc: JSON.stringify(doc),
        ...mirrorColumnsOf(model, doc),
      };
      if (!(await updateRecordRow(tx, model, updated, row.version))) throw preconditionFailed({ 'if-match': 'the record changed while this request was processed' });
      this.emit(tx, 'record.updated', model, updated, caller);
      return updated;
    });
  }

  private async readForWrite(tx: WriteTx, address: Address, caller: Caller, id: string, ifMatch: string | undefined): Promise<RecordRow> {
    const { model, parentId } = address;
    if (parentId !== null) await this.requireParent(model, caller, parentId, tx);
    const row = await readRecordRow(tx, model, id);
    if (!row || (parentId !== null && row.parent_id !== parentId)) return this.missing(model, id, tx);
    if (!this.visible(model, caller, row.owner))
      throw forbidden(`This ${model.name} record belongs to another owner`, { id: 'not accessible with this token' });
    if (ifMatch !== undefined && !etagMatches(ifMatch, this.etag(row)))
      throw preconditionFailed({ 'if-match': `does not match the current ETag ${this.etag(row)}` });
    return row;
  }

  /** Deletes a record and its children, leaving tombstones so their URLs answer 410. */
  async remove(address: Address, caller: Caller, id: string, ifMatch: string | undefined): Promise<void> {
    const { model } = address;
    await write(this.ctx.store, async (tx) => {
      const row = await this.readForWrite(tx, address, caller, id, ifMatch);
      const children = model.children.map((name) => this.ctx.collections.get(name)!);
      const removed = await deleteRecordTree(tx, model, row, children, Date.now());
      if (!removed) throw preconditionFailed({ 'if-match': 'the record changed while this request was processed' });
      // Each child removed with its parent is its own record.deleted, before the parent's.
      for (const child of removed)
        tx.emit({ type: 'record.deleted', collection: child.collection.name, record_id: child.id, owner: child.owner, actor: caller.subject, data: null });
      tx.emit({ type: 'record.deleted', collection: model.name, record_id: row.id, owner: row.owner, actor: caller.subject, data: null });
    });
  }

  /**
   * Creates the items of a bulk job's chunk (already validated by prepareCreate) inside one
   * write: each distinct parent is checked once, then the rows go in with multi-row inserts.
   * Returns, per item in order, its record or the ApiError that refused it (its parent's).
   */
  async insertMany(tx: WriteTx, model: CollectionModel, caller: Caller, items: { doc: Document; parentId: string | null }[]): Promise<(RecordRow | ApiError)[]> {
    const parents = new Map<string, ApiError | null>();
    for (const { parentId } of items) {
      if (parentId === null || parents.has(parentId)) continue;
      try {
        await this.requireParent(model, caller, parentId, tx);
        parents.set(parentId, null);
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        parents.set(parentId, e);
      }
    }
    const now = new Date().toISOString();
    const out: (RecordRow | ApiError)[] = [];
    const rows: RecordRow[] = [];
    for (const { doc, parentId } of items) {
      const refused = parentId === null ? null : parents.get(parentId);
      if (refused) {
        out.push(refused);
        continue;
      }
      const row = this.newRow(model, caller, doc, parentId, now);
      rows.push(row);
      out.push(row);
    }
    await insertRecordRows(tx, model, rows);
    for (const row of rows) this.emit(tx, 'record.created', model, row, caller);
    return out;
  }
}

/** RFC 7396 JSON merge patch. */
export function mergePatch(target: Document, patch: Document): Document {
  const out: Document = { ...target };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else if (typeof value === 'object' && !Array.isArray(value) && typeof out[key] === 'object' && out[key] !== null && !Array.isArray(out[key]))
      out[key] = mergePatch(out[key] as Document, value as Document);
    else if (typeof value === 'object' && !Array.isArray(value)) out[key] = mergePatch({}, value as Document);
    else out[key] = value;
  }
  return out;
}

/** If-Match: `*` or a list of entity tags, one of which must equal the current strong ETag. */
export function etagMatches(header: string, etag: string): boolean {
  const h = header.trim();
  if (h === '*') return true;
  return h.split(',').some((t) => t.trim() === etag);
}
