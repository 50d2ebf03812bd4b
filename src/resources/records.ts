import { createHash } from 'node:crypto';
import { sql, type CompiledQuery, type Kysely, type Transaction } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import type { AppContext } from '../context.js';
import type { Caller } from '../access/caller.js';
import { ApiError, badRequest, forbidden, gone, notFound, preconditionFailed } from '../http/errors.js';
import type { CollectionModel } from './model.js';
import type { ListQuery } from './query.js';
import type { Links } from './links.js';
import { parentReference, requireObject, splitServerFields, validateDocument, type Document } from './validation.js';

// The resource service: what "list / read / create / replace / patch / delete a record of this
// collection for this caller" means, independent of HTTP. Every write is one transaction.

/** A row of a collection's own table (r_<collection>); x_<field> columns mirror filter and sort fields. */
export interface RecordRow {
  id: string;
  owner: string;
  parent_id: string | null;
  version: number;
  created_at: string;
  updated_at: string;
  doc: string;
  [column: string]: unknown;
}

/** The columns a record is rendered from (the x_<field> mirrors are for filtering and sorting only). */
export const RECORD_COLUMNS = ['id', 'owner', 'parent_id', 'version', 'created_at', 'updated_at', 'doc'] as const;

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

function sameValues(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

export class Records {
  private readonly db: Kysely<any>;

  constructor(
    private readonly ctx: AppContext,
    readonly links: Links,
  ) {
    this.db = ctx.store.db as unknown as Kysely<any>;
  }

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
    const doc = row.doc.length > 2 ? `${row.doc.slice(1, -1)},` : '';
    const parent = model.parent ? `${JSON.stringify(model.parent.field)}:${JSON.stringify(row.parent_id)},` : '';
    return (
      `{"id":${JSON.stringify(row.id)},${doc}${parent}"owner":${JSON.stringify(row.owner)},` +
      `"created_at":${JSON.stringify(row.created_at)},"updated_at":${JSON.stringify(row.updated_at)},` +
      `"link":${this.links.forRecordJson(model, row.id, row.parent_id)}}`
    );
  }

  private visible(model: CollectionModel, caller: Caller, owner: string): boolean {
    return model.access === 'shared' || owner === caller.subject;
  }

  /**
   * 404, or 410 when the id belonged to a record that was deleted. Inside a transaction it must
   * read through that transaction: SQLite has one connection, so reading outside would wait forever.
   */
  private async missing(model: CollectionModel, id: string, db: Kysely<any> = this.db): Promise<never> {
    const tomb = await db
      .selectFrom('tombstones')
      .select('deleted_at')
      .where('collection', '=', model.name)
      .where('id', '=', id)
      .executeTakeFirst();
    if (tomb) throw gone(`This ${model.name} record was deleted`, { id: `deleted at ${new Date(Number(tomb.deleted_at)).toISOString()}` });
    throw notFound(`No such ${model.name} record`, { id: 'does not exist' });
  }

  /** Reading one record by id is the hottest query: Kysely builds and compiles it once per table. */
  private readonly byId = new Map<string, CompiledQuery>();

  private async row(db: Kysely<any>, model: CollectionModel, id: string): Promise<RecordRow | undefined> {
    let query = this.byId.get(model.table);
    if (!query) this.byId.set(model.table, (query = db.selectFrom(model.table).select(RECORD_COLUMNS).where('id', '=', '').compile()));
    return (await db.executeQuery<RecordRow>({ ...query, parameters: [id] })).rows[0];
  }

  /** The parent a nested URL or a flat body names must exist and be visible to the caller. */
  async requireParent(model: CollectionModel, caller: Caller, parentId: string, db: Kysely<any> = this.db): Promise<RecordRow> {
    const parentModel = this.ctx.collections.get(model.parent!.collection)!;
    const parent = await this.row(db, parentModel, parentId);
    if (!parent) return this.missing(parentModel, parentId, db);
    if (!this.visible(parentModel, caller, parent.owner))
      throw forbidden(`The ${parentModel.name} record belongs to another owner`, { [model.parent!.field]: 'not accessible with this token' });
    return parent;
  }

  /** Reads one record the caller may see, checking the nested parent when the URL had one. */
  async read(address: Address, caller: Caller, id: string): Promise<RecordRow> {
    const { model, parentId } = address;
    if (parentId !== null) await this.requireParent(model, caller, parentId);
    const row = await this.row(this.db, model, id);
    if (!row || (parentId !== null && row.parent_id !== parentId)) return this.missing(model, id);
    if (!this.visible(model, caller, row.owner))
      throw forbidden(`This ${model.name} record belongs to another owner`, { id: 'not accessible with this token' });
    return row;
  }

  async list(address: Address, caller: Caller, query: ListQuery): Promise<{ rows: RecordRow[]; total: number }> {
    const { model } = address;
    // SPEC: /zoos/{id}/animals and /animals?zoo_id={id} mean the same, statuses included.
    const parentFilter = query.filters.find((f) => f.field === model.parent?.field);
    const parentId = address.parentId ?? (parentFilter ? String(parentFilter.value) : null);
    if (parentId !== null) await this.requireParent(model, caller, parentId);
    const filters = query.filters.filter((f) => f.field !== model.parent?.field);
    // The values in the order the statements take them (the order of the where clauses below).
    const values: unknown[] = [];
    if (model.access === 'owner') values.push(caller.subject);
    if (parentId !== null) values.push(parentId);
    for (const f of filters) values.push(typeof f.value === 'boolean' ? Number(f.value) : f.value);

    const shape = `${model.table}|${parentId !== null}|${filters.map((f) => f.field).join(',')}|${query.sortby}|${query.order}`;
    let plan = this.listPlans.get(shape);
    if (!plan) {
      plan = this.listPlan(model, caller, parentId, filters, query);
      // Cached only when Kysely placed the values where this method puts them.
      if (sameValues(plan.page.parameters, [...values, query.limit, query.offset]) && sameValues(plan.count.parameters, values)) {
        if (this.listPlans.size >= 500) this.listPlans.clear();
        this.listPlans.set(shape, plan);
      }
    }
    const rows = (await this.db.executeQuery<RecordRow>({ ...plan.page, parameters: [...values, query.limit, query.offset] })).rows;
    // A short page that is not past the end tells the total without counting.
    if (rows.length < query.limit && (rows.length > 0 || query.offset === 0)) return { rows, total: query.offset + rows.length };
    const count = (await this.db.executeQuery<{ n: number | string }>({ ...plan.count, parameters: values })).rows[0];
    return { rows, total: Number(count?.n ?? 0) };
  }

  /** Lists are built and compiled by Kysely once per shape (collection, filter fields, sort), then reused with new values. */
  private readonly listPlans = new Map<string, { page: CompiledQuery; count: CompiledQuery }>();

  private listPlan(model: CollectionModel, caller: Caller, parentId: string | null, filters: ListQuery['filters'], query: ListQuery) {
    let base = this.db.selectFrom(model.table);
    if (model.access === 'owner') base = base.where('owner', '=', caller.subject);
    if (parentId !== null) base = base.where('parent_id', '=', parentId);
    for (const f of filters) base = base.where(`x_${f.field}`, '=', typeof f.value === 'boolean' ? Number(f.value) : f.value);
    const sortColumn = query.sortby === 'id' || query.sortby === 'created_at' || query.sortby === 'updated_at' ? query.sortby : `x_${query.sortby}`;
    let listing = base.select(RECORD_COLUMNS).limit(query.limit).offset(query.offset);
    // NULLs first ascending, last descending, on both engines; the id makes paging stable. The
    // system columns are never NULL: a plain ORDER BY lets PostgreSQL walk their index (a NULLS
    // clause that differs from its default would force a sort of every matching row).
    listing =
      sortColumn === 'id' || sortColumn === 'created_at' || sortColumn === 'updated_at'
        ? (sortColumn === 'id' ? listing : listing.orderBy(sortColumn, query.order)).orderBy('id', query.order)
        : listing
            .orderBy(sql`${sql.ref(sortColumn)} ${sql.raw(query.order === 'asc' ? 'asc nulls first' : 'desc nulls last')}`)
            .orderBy('id', query.order);
    return { page: listing.compile(), count: base.select((eb) => eb.fn.countAll().as('n')).compile() };
  }

  private columnsOf(model: CollectionModel, doc: Document): Record<string, unknown> {
    const values: Record<string, unknown> = {};
    for (const c of model.columns) {
      const v = doc[c.field];
      values[c.column] = v === undefined || v === null ? null : typeof v === 'boolean' ? Number(v) : typeof v === 'object' ? null : v;
    }
    return values;
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

  async insert(db: Kysely<any>, model: CollectionModel, caller: Caller, doc: Document, parentId: string | null): Promise<RecordRow> {
    if (parentId !== null) await this.requireParent(model, caller, parentId, db);
    const now = new Date().toISOString();
    const row: RecordRow = {
      id: uuidv7(),
      owner: caller.subject,
      parent_id: parentId,
      version: 1,
      created_at: now,
      updated_at: now,
      doc: JSON.stringify(doc),
      ...this.columnsOf(model, doc),
    };
    await db.insertInto(model.table).values(row).execute();
    return row;
  }

  /**
   * Creates a record. With an Idempotency-Key, a repeat by the same subject with the same body
   * returns the first record's id instead (`replayed`), and another body with the key is a 400.
   */
  async create(address: Address, caller: Caller, body: unknown, idempotencyKey?: string): Promise<Created> {
    const { doc, parentId } = this.prepareCreate(address, body);
    const { model } = address;
    if (!idempotencyKey) {
      const row = await this.db.transaction().execute((trx) => this.insert(trx, model, caller, doc, parentId));
      return { id: row.id, row, replayed: false };
    }
    const bodyHash = createHash('sha256').update(`${model.name}\n${parentId ?? ''}\n${JSON.stringify(body)}`).digest('base64url');
    const earlier = await this.idempotent(caller, idempotencyKey, bodyHash);
    if (earlier) return earlier;
    try {
      const row = await this.db.transaction().execute(async (trx) => {
        const created = await this.insert(trx, model, caller, doc, parentId);
        await trx
          .insertInto('idempotency_keys')
          .values({ subject: caller.subject, key: idempotencyKey, collection: model.name, body_hash: bodyHash, record_id: created.id, created_at: Date.now() })
          .execute();
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
    const seen = await this.ctx.store.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('subject', '=', caller.subject)
      .where('key', '=', key)
      .executeTakeFirst();
    if (!seen) return null;
    if (seen.body_hash !== bodyHash)
      throw badRequest('Idempotency-Key reused with a different request', { 'idempotency-key': 'was used before for another request body' });
    const model = this.ctx.collections.get(seen.collection);
    const row = model ? await this.row(this.db, model, seen.record_id) : undefined;
    return { id: seen.record_id, row: row ?? null, replayed: true };
  }

  /** PUT (whole representation) or PATCH (JSON merge patch, RFC 7396), validated after merging. */
  async update(address: Address, caller: Caller, id: string, body: unknown, mode: 'replace' | 'merge', ifMatch: string | undefined): Promise<RecordRow> {
    const { model, parentId } = address;
    const input = requireObject(body);
    return this.db.transaction().execute(async (trx) => {
      const row = await this.readForWrite(trx, address, caller, id, ifMatch);
      const current = this.toResource(model, row);
      const { doc: changes, detail } = splitServerFields(model, input, current, parentId !== null);
      // A body with server-owned fields is refused before the parent is looked at, naming every bad field.
      if (Object.keys(detail).length) validateDocument(model, mode === 'replace' ? changes : mergePatch(JSON.parse(row.doc) as Document, changes), detail);
      let newParent = row.parent_id;
      if (model.parent && parentId === null) {
        const ref = parentReference(model, input, mode === 'replace');
        if (ref !== null && ref !== row.parent_id) {
          await this.requireParent(model, caller, ref, trx);
          newParent = ref;
        }
      }
      const doc = mode === 'replace' ? changes : mergePatch(JSON.parse(row.doc) as Document, changes);
      validateDocument(model, doc);
      const updated: RecordRow = {
        ...row,
        parent_id: newParent,
        version: row.version + 1,
        updated_at: new Date().toISOString(),
        doc: JSON.stringify(doc),
        ...this.columnsOf(model, doc),
      };
      const { id: _id, owner: _owner, created_at: _created, ...set } = updated;
      const result = await trx.updateTable(model.table).set(set).where('id', '=', id).where('version', '=', row.version).executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) throw preconditionFailed({ 'if-match': 'the record changed while this request was processed' });
      return updated;
    });
  }

  private async readForWrite(trx: Transaction<any>, address: Address, caller: Caller, id: string, ifMatch: string | undefined): Promise<RecordRow> {
    const { model, parentId } = address;
    if (parentId !== null) await this.requireParent(model, caller, parentId, trx);
    const row = await this.row(trx, model, id);
    if (!row || (parentId !== null && row.parent_id !== parentId)) return this.missing(model, id, trx);
    if (!this.visible(model, caller, row.owner))
      throw forbidden(`This ${model.name} record belongs to another owner`, { id: 'not accessible with this token' });
    if (ifMatch !== undefined && !etagMatches(ifMatch, this.etag(row)))
      throw preconditionFailed({ 'if-match': `does not match the current ETag ${this.etag(row)}` });
    return row;
  }

  /** Deletes a record and its children, leaving tombstones so their URLs answer 410. */
  async remove(address: Address, caller: Caller, id: string, ifMatch: string | undefined): Promise<void> {
    const { model } = address;
    await this.db.transaction().execute(async (trx) => {
      const row = await this.readForWrite(trx, address, caller, id, ifMatch);
      const now = Date.now();
      const tombs = [{ collection: model.name, id: row.id, deleted_at: now }];
      for (const childName of model.children) {
        const child = this.ctx.collections.get(childName)!;
        const ids = (await trx.selectFrom(child.table).select('id').where('parent_id', '=', row.id).execute()) as { id: string }[];
        for (const c of ids) tombs.push({ collection: child.name, id: c.id, deleted_at: now });
        await trx.deleteFrom(child.table).where('parent_id', '=', row.id).execute();
        await trx.deleteFrom('attachments').where('collection', '=', child.name).where('record_id', 'in', ids.length ? ids.map((c) => c.id) : ['']).execute();
      }
      await trx.deleteFrom('attachments').where('collection', '=', model.name).where('record_id', '=', row.id).execute();
      const result = await trx.deleteFrom(model.table).where('id', '=', row.id).where('version', '=', row.version).executeTakeFirst();
      if (Number(result.numDeletedRows) !== 1) throw preconditionFailed({ 'if-match': 'the record changed while this request was processed' });
      for (let i = 0; i < tombs.length; i += 200) await trx.insertInto('tombstones').values(tombs.slice(i, i + 200)).execute();
    });
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
