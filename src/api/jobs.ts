import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../contract/context.js';
import type { Caller } from '../contract/caller.js';
import { ApiError, badRequest, forbidden, notFound } from '../platform/http/errors.js';
import { write } from '../platform/store/write-path.js';
import { advanceJob, claimJobLease, findJob, findJobHead, findStaleJobs, insertJob, type JobRow } from './store/jobs.js';
import type { Address, Records } from './records.js';
import { requireAnyScope } from './access/decide.js';
import type { Document } from './validation.js';
import { newTimeOrderedId } from '../platform/crypto/secrets.js';
import { Turns } from './turns.js';

// A POSTed JSON array becomes a background job (docs/api.md, "Bulk POST → 202 and jobs"). The
// job and its items live in the database; any instance may carry on a job whose lease ran out
// (its process died), and each chunk of items is inserted in the same transaction as the progress
// that records it, so nothing is created twice or lost. Its route is in routes.ts.

// Items per transaction. Each commit writes every page its rows touched (≈ 300 index pages for
// 250 zoos spread over 50 cities and 220 years): larger chunks share those writes, smaller ones
// hold the database for less time. 250: ~10 ms per chunk, a quarter of a default-size job
// (docs/decisions.md, "Bulk creates").
const CHUNK = 250;
const LEASE_MS = 30_000;
const SWEEP_MS = 2_000;

export interface JobResult {
  index: number;
  status: number;
  id?: string;
  error?: string;
  detail?: Record<string, string>;
}

export class Jobs {
  private timer: NodeJS.Timeout | null = null;
  private running = new Set<string>();
  private stopping = false;
  /**
   * The jobs of this process take turns, the event loop turning before each chunk. On SQLite a
   * chunk's statements run on the event loop itself: one chunk at a time. On PostgreSQL a chunk
   * waits on the database and the event loop stays free: every job's chunks run as they come, in
   * parallel on the pool, as before.
   */
  private readonly turns: Turns;

  constructor(
    private readonly ctx: AppContext,
    private readonly records: Records,
    private readonly log: FastifyBaseLogger,
  ) {
    this.turns = new Turns(ctx.store.runsOnEventLoop ? 1 : Number.POSITIVE_INFINITY);
  }

  async submit(address: Address, caller: Caller, items: unknown[]): Promise<JobRow> {
    if (items.length === 0) throw badRequest('An empty array creates nothing', { body: 'must contain at least one record' });
    const max = this.ctx.config.api.maxBulkItems;
    if (items.length > max) throw badRequest('Too many records in one request', { body: `at most ${max} records per request` });
    if (address.parentId !== null) await this.records.requireParent(address.model, caller, address.parentId);
    const now = Date.now();
    const job: JobRow = {
      id: newTimeOrderedId(),
      subject: caller.subject,
      client_id: caller.clientId,
      collection: address.model.name,
      parent_id: address.parentId,
      status: 'queued',
      total: items.length,
      processed: 0,
      items: JSON.stringify(items),
      results: '[]',
      lease_until: now + LEASE_MS,
      created_at: now,
      updated_at: now,
    };
    await write(this.ctx.store, (tx) => insertJob(tx, job));
    setImmediate(() => void this.run(job.id, { items, processed: 0, results: '' }));
    return job;
  }

  toResource(job: JobRow): Record<string, unknown> {
    const results = JSON.parse(job.results) as JobResult[];
    const model = this.ctx.collections.get(job.collection);
    const links = this.records.links;
    return {
      id: job.id,
      status: job.status,
      collection: job.collection,
      total: job.total,
      processed: job.processed,
      progress: job.total ? Math.round((job.processed / job.total) * 1000) / 1000 : 1,
      succeeded: results.filter((r) => r.status === 201).length,
      failed: results.filter((r) => r.status !== 201).length,
      results: results.map((r) =>
        r.id && model ? { ...r, link: { self: links.link(links.recordPath(model, r.id), `Record ${r.index}`) } } : r,
      ),
      created_at: new Date(Number(job.created_at)).toISOString(),
      updated_at: new Date(Number(job.updated_at)).toISOString(),
      link: {
        self: links.link(`/jobs/${job.id}`, 'This job'),
        ...(model ? { collection: links.link(links.collectionPath(model, job.parent_id), `The ${model.name} collection`) } : {}),
      },
    };
  }

  /** A job as its submitter sees it (GET /v1/jobs/{id}): 404 unknown, 403 another owner's or without a scope of its collection. */
  async read(caller: Caller, id: string): Promise<Record<string, unknown>> {
    const job = await findJob(this.ctx.store, id);
    if (!job) throw notFound('No such job', { id: 'does not exist' });
    requireAnyScope(caller, job.collection);
    if (job.subject !== caller.subject) throw forbidden('This job belongs to another owner', { id: 'not accessible with this token' });
    return this.toResource(job);
  }

  start(): void {
    this.timer = setInterval(() => void this.sweep(), SWEEP_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    while (this.running.size) await new Promise((r) => setTimeout(r, 20));
  }

  /** Takes over jobs whose lease ran out (their process stopped or died). */
  private async sweep(): Promise<void> {
    if (this.stopping) return;
    try {
      const now = Date.now();
      for (const job of await findStaleJobs(this.ctx.store, now, 5)) {
        const claimed = await write(this.ctx.store, (tx) => claimJobLease(tx, job.id, job.leaseUntil, now + LEASE_MS));
        if (claimed) void this.run(job.id);
      }
    } catch (err) {
      this.log.warn({ err }, 'job sweep failed');
    }
  }

  private async run(id: string, loaded: Loaded | null = null): Promise<void> {
    if (this.running.has(id) || this.stopping) return;
    this.running.add(id);
    let state = loaded;
    try {
      for (;;) {
        // (Each job running its chunks on its own, the four jobs of a bulk load held the event loop
        // for four chunks at a time, up to 0.7 s at 700,000 records: the overload guard's 503.)
        const next = await this.turns.take(() => (this.stopping ? null : this.processChunk(id, state)));
        if (!next) return;
        state = next;
      }
    } catch (err) {
      if (err instanceof MovedOn) this.log.info({ job: id }, 'bulk job carried on by another instance');
      else this.log.error({ err, job: id }, 'bulk job failed; another sweep will retry it');
    } finally {
      this.running.delete(id);
    }
  }

  /**
   * One chunk in one transaction: its records and the progress that records them commit
   * together. Returns the job as it stands after the commit, or null when it is finished.
   */
  private async processChunk(id: string, state: Loaded | null): Promise<Loaded | null> {
    return write(this.ctx.store, async (tx) => {
      const job = await findJobHead(tx, id);
      if (!job || job.status === 'done') return null;
      let s = state;
      if (!s || s.processed !== job.processed) {
        // First chunk after a takeover (or the job moved on elsewhere): read the items and results.
        const full = await findJob(tx, id);
        if (!full) return null;
        s = { items: JSON.parse(full.items) as unknown[], processed: full.processed, results: full.results.slice(1, -1) };
      }
      const start = s.processed;
      const end = Math.min(start + CHUNK, s.items.length);
      const results: JobResult[] = [];
      const model = this.ctx.collections.get(job.collection);
      if (!model) {
        for (let index = start; index < end; index++) results.push({ index, status: 404, error: `No collection named ${job.collection}`, detail: {} });
      } else {
        const address: Address = { model, parentId: job.parent_id };
        const valid: { index: number; doc: Document; parentId: string | null }[] = [];
        for (let index = start; index < end; index++) {
          try {
            valid.push({ index, ...this.records.prepareCreate(address, s.items[index]) });
          } catch (e) {
            if (!(e instanceof ApiError)) throw e;
            results[index - start] = { index, status: e.status, error: e.message, detail: e.detail };
          }
        }
        const caller: Caller = {
          subject: job.subject,
          clientId: job.client_id,
          scopes: new Set(),
          tokenHash: '',
          grantId: '',
          tokenType: 'bearer',
          origins: [],
          expiresAt: Number.MAX_SAFE_INTEGER,
        };
        const created = await this.records.insertMany(tx, model, caller, valid);
        for (let i = 0; i < valid.length; i++) {
          const { index } = valid[i];
          const r = created[i];
          results[index - start] = r instanceof ApiError ? { index, status: r.status, error: r.message, detail: r.detail } : { index, status: 201, id: r.id };
        }
      }
      // The results so far as JSON text: only this chunk's are serialised.
      const chunk = JSON.stringify(results).slice(1, -1);
      const all = s.results && chunk ? `${s.results},${chunk}` : s.results || chunk;
      const done = end >= s.items.length;
      const now = Date.now();
      const advanced = await advanceJob(tx, id, start, {
        processed: end,
        results: `[${all}]`,
        status: done ? 'done' : 'running',
        lease_until: now + LEASE_MS,
        updated_at: now,
        ...(done ? { items: '[]' } : {}),
      });
      if (!advanced) throw new MovedOn();
      return done ? null : { items: s.items, processed: end, results: all };
    });
  }
}

/** A job this process is carrying on: its items parsed once, and its results so far as JSON text (the array's elements). */
interface Loaded {
  items: unknown[];
  processed: number;
  results: string;
}

/** Another instance recorded progress on the job first: this chunk rolls back and this process lets the job go. */
class MovedOn extends Error {}
