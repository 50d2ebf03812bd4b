import { sql, type RawBuilder } from 'kysely';
import type { CollectionModel } from '../../../contract/collections.js';
import { sqlOf } from '../../../platform/store/sql.js';
import type { SearchIndex } from './layout.js';

// SQLite: an FTS5 table `<table>_fts` fed by triggers on the record table.
//
// `access: owner`: a record's FTS rowid is its owner's number (table search_owners) times 2^36
// plus the record's rowid (which gatehouse never renumbers: no VACUUM), so one owner's records are
// one rowid range: a search reads and ranks the caller's matches only, and counts them without
// reading a record. Other collections: the record's rowid.

export const SEARCH_OWNER_SHIFT = 36;
export const SEARCH_ROWID_MASK = 2 ** SEARCH_OWNER_SHIFT - 1;
/** Owner numbers stay below 2^27, so that a search rowid stays below 2^63. */
export const SEARCH_MAX_OWNERS = 2 ** 27;
/** The settings marker's prefix of that layout (a search index built before it is rebuilt). */
export const SEARCH_LAYOUT_OWNER_RANGES = 'owner-ranges';

/** Whether the collection's search index is laid out in owner ranges. */
const inOwnerRanges = (model: CollectionModel) => model.access === 'owner';

/** The first search-index rowid of an owner's range (`subject`: an SQL expression of the owner; NULL when it has no number yet). */
const ownerRangeStart = (subject: RawBuilder<unknown>) => sql`((select num from search_owners where subject = ${subject}) << ${sql.lit(SEARCH_OWNER_SHIFT)})`;

const ftsOf = (model: CollectionModel) => `${model.table}_fts`;
const ftsRowid = (model: CollectionModel) => sql.ref(`${ftsOf(model)}.rowid`);

export const sqliteSearchIndex: SearchIndex = {
  layout: async (_store, model) => (inOwnerRanges(model) && model.search.length > 0 ? `${SEARCH_LAYOUT_OWNER_RANGES}:` : ''),

  build: async (store, model, layout) => {
    const ranges = layout !== '';
    const db = sqlOf(store);
    const fts = ftsOf(model);
    if (ranges) {
      // The backfill below must not place a record in another owner's range either: what the
      // trigger refuses one record at a time (RAISE exists only in triggers) is refused here
      // before anything changes. Owners are counted as if each one still needed a new number.
      await sql`create table if not exists search_owners (num integer primary key, subject text not null unique)`.execute(db);
      const { rows } = await sql<{ full: number }>`select coalesce((select max(rowid) from ${sql.table(model.table)}), 0) > ${sql.lit(SEARCH_ROWID_MASK)}
        or coalesce((select max(num) from search_owners), 0) + (select count(distinct owner) from ${sql.table(model.table)}) >= ${sql.lit(SEARCH_MAX_OWNERS)} as full`.execute(db);
      if (rows[0]?.full) throw new Error(`the search index of ${model.name} has no room for its records (a record beyond the 2^36th row, or more than 2^27 owners)`);
    }
    for (const t of ['ai', 'ad', 'au']) await sql`drop trigger if exists ${sql.id(`${fts}_${t}`)}`.execute(db);
    await sql`drop table if exists ${sql.table(fts)}`.execute(db);
    if (model.search.length === 0) return;
    const text = (row: 'new' | 'r') =>
      sql.join(
        model.search.map((f) => sql`coalesce(json_extract(${sql.raw(row)}.doc, ${sql.lit('$.' + f)}), '')`),
        sql` || ' ' || `,
      );
    // The FTS rowid of a record (`row`: old or the backfill's r).
    const key = (row: 'old' | 'r') => (ranges ? sql`${ownerRangeStart(sql.raw(`${row}.owner`))} + ${sql.raw(row)}.rowid` : sql`${sql.raw(row)}.rowid`);
    // Indexes the new row. A record beyond its owner's range (2^36 rows) or an owner beyond 2^27
    // would land in another owner's range: refused, never indexed there.
    const index = ranges
      ? sql`insert or ignore into search_owners (subject) values (new.owner);
        insert into ${sql.table(fts)} (rowid, body)
          select case when new.rowid <= ${sql.lit(SEARCH_ROWID_MASK)} and o.num < ${sql.lit(SEARCH_MAX_OWNERS)}
                      then (o.num << ${sql.lit(SEARCH_OWNER_SHIFT)}) + new.rowid
                      else raise(abort, 'the search index has no room for this record') end,
            ${text('new')}
          from search_owners as o where o.subject = new.owner;`
      : sql`insert into ${sql.table(fts)} (rowid, body) values (new.rowid, ${text('new')});`;
    await sql`create virtual table ${sql.table(fts)} using fts5(body, tokenize = 'unicode61 remove_diacritics 2')`.execute(db);
    await sql`create trigger ${sql.id(`${fts}_ai`)} after insert on ${sql.table(model.table)} begin ${index} end`.execute(db);
    await sql`create trigger ${sql.id(`${fts}_ad`)} after delete on ${sql.table(model.table)} begin
      delete from ${sql.table(fts)} where rowid = ${key('old')}; end`.execute(db);
    await sql`create trigger ${sql.id(`${fts}_au`)} after update of doc, owner on ${sql.table(model.table)} begin
      delete from ${sql.table(fts)} where rowid = ${key('old')};
      ${index} end`.execute(db);
    if (ranges) await sql`insert or ignore into search_owners (subject) select distinct owner from ${sql.table(model.table)}`.execute(db);
    await sql`insert into ${sql.table(fts)} (rowid, body) select ${key('r')}, ${text('r')} from ${sql.table(model.table)} as r`.execute(db);
  },

  // Each word a quoted FTS5 string: taken literally, all of them required.
  terms: (words) => words.map((w) => `"${w.replace(/"/g, '""')}"`).join(' '),

  where: (model, terms, owner) => {
    const match = [sql`${sql.ref(ftsOf(model))} match ${terms}`];
    if (owner !== null && inOwnerRanges(model)) {
      const start = ownerRangeStart(owner);
      match.push(sql`${ftsRowid(model)} between ${start} and ${start} + ${sql.lit(SEARCH_ROWID_MASK)}`);
    }
    return match;
  },

  from: (model) => {
    // The record an index row stands for.
    const record = inOwnerRanges(model) ? sql`(${ftsRowid(model)} & ${sql.lit(SEARCH_ROWID_MASK)})` : ftsRowid(model);
    return sql`${sql.table(model.table)} join ${sql.table(ftsOf(model))} on ${sql.ref(`${model.table}.rowid`)} = ${record}`;
  },

  // Ranked by bm25; equal scores come in the order of the index's rows (the order the records were
  // created in): a fixed order that needs no record read to sort by.
  rankOrder: (model) => [sql`${sql.ref(`${ftsOf(model)}.rank`)}`, ftsRowid(model)],

  // Only the search narrows an owner's records: its index alone finds, ranks and counts them, and
  // the page's records are read afterwards (20 reads, not one per match).
  alone: (model, { where, selected, limit, offset, owner, ranked }) => {
    if (!inOwnerRanges(model)) return null;
    const fts = ftsOf(model);
    const whereSql = sql`where ${sql.join(where, sql` and `)}`;
    const count = sql`select count(*) as n from ${sql.table(fts)} ${whereSql}`;
    if (!ranked) return { page: null, count };
    const page = sql`with p as (select ${ftsRowid(model)} as r, ${sql.ref(`${fts}.rank`)} as k from ${sql.table(fts)} ${whereSql}
          order by k, r limit ${limit} offset ${offset})
        select ${sql.join(selected)} from p join ${sql.table(model.table)} on ${sql.ref(`${model.table}.rowid`)} = (p.r & ${sql.lit(SEARCH_ROWID_MASK)})
        where ${sql.ref(`${model.table}.owner`)} = ${owner} order by p.k, p.r`;
    return { page, count };
  },
};
