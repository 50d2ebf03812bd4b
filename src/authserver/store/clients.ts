import type { ClientsTable } from '../../platform/store/schema.js';
import { count, sqlOf, type On } from '../../platform/store/sql.js';
import type { WriteTx } from '../../platform/store/write-path.js';
import { webOrigins } from '../../platform/http/origins.js';

// Owner of the clients table and of client_origins (every client's web origins, kept in step with
// its redirect URIs and --origin values in the same transaction). Booleans and JSON columns are
// mapped here; the rest of the program sees ClientRecord.

export interface ClientRecord {
  id: string;
  name: string;
  public: boolean;
  secretHash: string | null;
  redirectUris: string[];
  grantTypes: string[];
  /** Registered scope; null means every scope of the deployment. */
  scope: string | null;
  tokenType: string;
  createdAt: number;
  /** Origins registered with --origin (the redirect URIs' own origins are added to them for CORS). */
  origins: string[];
  /** Its home page (https), shown to users; null when none was given. */
  uri: string | null;
  /** The operator vouches for it: the consent page shows no "not verified" note. */
  verified: boolean;
  /** A resource server: it may introspect every client's tokens (others only their own). */
  introspect: boolean;
  /** Its authorization requests must carry a PKCE challenge even though it is confidential. */
  requirePkce: boolean;
  /** How its ID tokens are signed (OpenID Connect): RS256 or ES256. */
  idTokenSignedResponseAlg: string;
  /** Where RP-initiated logout may send the browser back. */
  postLogoutRedirectUris: string[];
  /** Its authorization requests must be pushed to {auth_url}/par first (RFC 9126). */
  requirePar: boolean;
}

/** Every origin a browser may call from for this client: its redirect URIs' origins and its --origin ones. */
export function originsOf(client: Pick<ClientRecord, 'redirectUris' | 'origins'>): string[] {
  return webOrigins([...client.redirectUris, ...client.origins]);
}

function fromRow(row: ClientsTable): ClientRecord {
  return {
    id: row.id,
    name: row.name,
    public: Number(row.public) === 1,
    secretHash: row.secret_hash,
    redirectUris: JSON.parse(row.redirect_uris) as string[],
    grantTypes: JSON.parse(row.grant_types) as string[],
    scope: row.scope,
    tokenType: row.token_type,
    createdAt: Number(row.created_at),
    origins: JSON.parse(row.origins ?? '[]') as string[],
    uri: row.uri ?? null,
    verified: Number(row.verified ?? 0) === 1,
    introspect: Number(row.introspect ?? 0) === 1,
    requirePkce: Number(row.require_pkce ?? 0) === 1,
    idTokenSignedResponseAlg: row.id_token_signed_response_alg ?? 'RS256',
    postLogoutRedirectUris: JSON.parse(row.post_logout_redirect_uris ?? '[]') as string[],
    requirePar: Number(row.require_par ?? 0) === 1,
  };
}

async function writeOrigins(tx: WriteTx, client: ClientRecord): Promise<void> {
  await sqlOf(tx).deleteFrom('client_origins').where('client_id', '=', client.id).execute();
  const origins = originsOf(client);
  if (origins.length) await sqlOf(tx).insertInto('client_origins').values(origins.map((origin) => ({ origin, client_id: client.id }))).execute();
}

/** The client's origins (redirect URIs' and --origin), or null when no such client is registered. */
export async function clientOrigins(on: On, id: string): Promise<string[] | null> {
  const row = await sqlOf(on).selectFrom('clients').select(['redirect_uris', 'origins']).where('id', '=', id).executeTakeFirst();
  return row ? originsOf({ redirectUris: JSON.parse(row.redirect_uris) as string[], origins: JSON.parse(row.origins ?? '[]') as string[] }) : null;
}

/** Whether some registered client lists this origin (an indexed read). */
export async function originRegistered(on: On, origin: string): Promise<boolean> {
  return (await sqlOf(on).selectFrom('client_origins').select('client_id').where('origin', '=', origin).limit(1).executeTakeFirst()) !== undefined;
}

export async function findClientRecord(on: On, id: string): Promise<ClientRecord | null> {
  const row = await sqlOf(on).selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? fromRow(row) : null;
}

export async function clientExists(on: On, id: string): Promise<boolean> {
  return (await sqlOf(on).selectFrom('clients').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

export async function listClientRecords(on: On): Promise<ClientRecord[]> {
  const rows = await sqlOf(on).selectFrom('clients').selectAll().orderBy('created_at').execute();
  return rows.map(fromRow);
}

export async function anyClient(on: On): Promise<boolean> {
  return (await sqlOf(on).selectFrom('clients').select('id').limit(1).execute()).length > 0;
}

export async function insertClient(tx: WriteTx, client: ClientRecord): Promise<void> {
  await sqlOf(tx)
    .insertInto('clients')
    .values({
      id: client.id,
      name: client.name,
      secret_hash: client.secretHash,
      public: client.public ? 1 : 0,
      redirect_uris: JSON.stringify(client.redirectUris),
      grant_types: JSON.stringify(client.grantTypes),
      scope: client.scope,
      token_type: client.tokenType,
      created_at: client.createdAt,
      origins: JSON.stringify(client.origins),
      uri: client.uri,
      verified: client.verified ? 1 : 0,
      introspect: client.introspect ? 1 : 0,
      require_pkce: client.requirePkce ? 1 : 0,
      id_token_signed_response_alg: client.idTokenSignedResponseAlg,
      post_logout_redirect_uris: JSON.stringify(client.postLogoutRedirectUris),
      require_par: client.requirePar ? 1 : 0,
    })
    .execute();
  await writeOrigins(tx, client);
}

/** True when there was such a client. */
export async function deleteClient(tx: WriteTx, id: string): Promise<boolean> {
  await sqlOf(tx).deleteFrom('client_origins').where('client_id', '=', id).execute();
  return count(await sqlOf(tx).deleteFrom('clients').where('id', '=', id).executeTakeFirst()) > 0;
}

/** Writes a client's changeable fields (everything but its id, type, secret and creation time). */
export async function updateClientRecord(tx: WriteTx, client: ClientRecord): Promise<void> {
  await sqlOf(tx)
    .updateTable('clients')
    .set({
      name: client.name,
      redirect_uris: JSON.stringify(client.redirectUris),
      grant_types: JSON.stringify(client.grantTypes),
      scope: client.scope,
      token_type: client.tokenType,
      origins: JSON.stringify(client.origins),
      uri: client.uri,
      verified: client.verified ? 1 : 0,
      introspect: client.introspect ? 1 : 0,
      require_pkce: client.requirePkce ? 1 : 0,
      id_token_signed_response_alg: client.idTokenSignedResponseAlg,
      post_logout_redirect_uris: JSON.stringify(client.postLogoutRedirectUris),
      require_par: client.requirePar ? 1 : 0,
    })
    .where('id', '=', client.id)
    .execute();
  await writeOrigins(tx, client);
}

export async function updateClientSecret(tx: WriteTx, id: string, secretHash: string): Promise<void> {
  await sqlOf(tx).updateTable('clients').set({ secret_hash: secretHash }).where('id', '=', id).execute();
}
