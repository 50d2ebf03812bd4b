import { sql } from 'kysely';
import type { CollectionModel } from '../../../contract/collections.js';
import type { Store } from '../../../platform/store/store.js';
import { sqlOf } from '../../../platform/store/sql.js';
import type { SearchIndex } from './layout.js';

// PostgreSQL: a generated tsvector column `search_vector` with a GIN index.
//
// `access: owner`: a GIN index on (owner, search_vector), which needs the btree_gin extension (in
// PostgreSQL's contrib, trusted since 13: a role that may create in the database may create it);
// where it cannot be created, the GIN index on search_vector alone, and the owner is checked on
// each match's row.

/** The settings marker's prefix of the owner-led layout. */
const SEARCH_LAYOUT_OWNER_GIN = 'owner-gin';

const vector = (model: CollectionModel) => sql.ref(`${model.table}.search_vector`);

export const postgresSearchIndex: SearchIndex = {
  layout: async (store, model, once) =>
    model.access === 'owner' && model.search.length > 0 && (await once('btree_gin', () => btreeGin(store))) ? `${SEARCH_LAYOUT_OWNER_GIN}:` : '',

  build: async (store, model, layout, have) => {
    const db = sqlOf(store);
    const fields = model.search.join(',');
    // Only the index changes when only the layout did (the owner joined it): re-adding the
    // generated column would rewrite every row of the table.
    const sameFields = have !== '' && have.slice(have.indexOf(':') + 1) === fields;
    await sql`drop index if exists ${sql.id(`${model.table}_search`)}`.execute(db);
    if (!sameFields) await sql`alter table ${sql.table(model.table)} drop column if exists search_vector`.execute(db);
    if (model.search.length === 0) return;
    const text = sql.join(
      model.search.map((f) => sql`coalesce(doc::jsonb ->> ${sql.lit(f)}, '')`),
      sql` || ' ' || `,
    );
    if (!sameFields)
      await sql`alter table ${sql.table(model.table)} add column search_vector tsvector
        generated always as (to_tsvector('simple'::regconfig, ${text})) stored`.execute(db);
    await sql`create index ${sql.id(`${model.table}_search`)} on ${sql.table(model.table)}
      using gin (${sql.raw(layout !== '' ? 'owner, ' : '')}search_vector)`.execute(db);
  },

  terms: (words) => words.join(' '),
  where: (model, terms) => [sql`${vector(model)} @@ plainto_tsquery('simple', ${terms})`],
  from: (model) => sql`${sql.table(model.table)}`,
  rankOrder: (model, terms, sortKeys) => [sql`ts_rank(${vector(model)}, plainto_tsquery('simple', ${terms})) desc`, ...sortKeys],
  alone: () => null,
};

/**
 * Whether PostgreSQL's btree_gin extension is there or could be created now (it lets a GIN index
 * hold the owner beside the search vector). Not an error when it cannot: the search index is then
 * the vector alone. Asked once per sync, by the first owner collection with search fields.
 * Creating it is tried only where the server ships it and the role may create it (a trusted
 * extension needs CREATE on the database, any other a superuser), so that a role without that
 * right does not leave a "permission denied" error in the server's log at every start.
 */
async function btreeGin(store: Store): Promise<boolean> {
  const db = sqlOf(store);
  const installed = async () => (await sql<{ n: number }>`select count(*)::int as n from pg_extension where extname = 'btree_gin'`.execute(db)).rows[0].n > 0;
  if (await installed()) return true;
  if (!(await mayCreateExtension(store, 'btree_gin'))) return false;
  try {
    await sql`create extension if not exists btree_gin`.execute(db);
  } catch {
    // Another process created it meanwhile, or a rule the check above does not know.
  }
  return installed();
}

/** Whether this role may create the extension `name` here (exported for its test). */
export async function mayCreateExtension(store: Store, name: string): Promise<boolean> {
  try {
    const { rows } = await sql<{ may: boolean }>`select has_database_privilege(current_database(), 'CREATE') and exists (
        select 1 from pg_available_extensions a join pg_available_extension_versions v on v.name = a.name and v.version = a.default_version
        where a.name = ${name} and (v.trusted or not v.superuser or (select rolsuper from pg_roles where rolname = current_user))) as may`.execute(sqlOf(store));
    return rows[0].may;
  } catch {
    return true; // a server before PostgreSQL 13 has no `trusted` column: let creating it tell
  }
}
