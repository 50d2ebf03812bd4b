import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { AppContext } from '../../contract/context.js';
import type { Caller } from '../../contract/caller.js';
import { write } from '../../platform/store/write-path.js';
import { addSubscription, removeSubscription } from '../store/mcp-sessions.js';
import type { RecordResources } from './resources.js';
import type { McpSession } from './sessions.js';

// resources/subscribe and resources/unsubscribe (docs/mcp.md#following-changes): a session follows
// the records its caller may read, as resources/read decides it; the rows are in the database, so the
// instance holding the session's stream (stream.ts) finds them whichever instance took the subscribe.

/** How many records one session may follow at once. */
export const MAX_SUBSCRIPTIONS = 100;
/** How many sessions of one user's client keep what they follow: a newer one lets the oldest go. */
export const MAX_SESSIONS = 20;
const LIMITS = { sessions: MAX_SESSIONS, subscriptions: MAX_SUBSCRIPTIONS };

function requireSession(session: McpSession | null, method: string): McpSession {
  if (session) return session;
  throw new McpError(ErrorCode.InvalidRequest, `${method} needs a session: send initialize, then the Mcp-Session-Id it answers with every request, and open GET /mcp with it for the notifications`);
}

export class Subscriptions {
  constructor(
    private readonly ctx: AppContext,
    private readonly resources: RecordResources,
  ) {}

  /** Follows a record the caller may read; refused as resources/read refuses it (-32002 for a missing or deleted one). */
  async subscribe(caller: Caller, session: McpSession | null, uri: string): Promise<Record<string, never>> {
    const following = requireSession(session, 'resources/subscribe');
    const { model, row } = await this.resources.record(caller, uri);
    const outcome = await write(this.ctx.store, (tx) => addSubscription(tx, following, { collection: model.name, recordId: row.id, uri }, LIMITS, Date.now()));
    if (outcome === 'full') throw new McpError(ErrorCode.InvalidRequest, `This session follows ${MAX_SUBSCRIPTIONS} resources already: unsubscribe from one first`);
    if (outcome === 'superseded') throw new McpError(ErrorCode.InvalidRequest, `Only the ${MAX_SESSIONS} newest sessions of this client follow resources: send initialize for a new session`);
    return {};
  }

  /** Stops following a record (answered alike whether the session followed it or not). */
  async unsubscribe(session: McpSession | null, uri: string): Promise<Record<string, never>> {
    const following = requireSession(session, 'resources/unsubscribe');
    const { model, id } = this.resources.address(uri);
    await write(this.ctx.store, (tx) => removeSubscription(tx, following.id, { collection: model.name, recordId: id }));
    return {};
  }
}
