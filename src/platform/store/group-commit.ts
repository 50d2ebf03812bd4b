import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

// Group commit: small independent writes that arrive together (token issuance under load) share
// one transaction, so the engine commits once for many requests instead of once per insert. Each
// caller still waits until its own write is durable; if the shared transaction fails, every write
// is retried on its own so that one bad write cannot fail the others.

type Work = (trx: Transaction<Database>) => Promise<void>;
interface Pending {
  work: Work;
  resolve: () => void;
  reject: (e: unknown) => void;
}

export class GroupCommit {
  private queue: Pending[] = [];
  private flushing = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly maxBatch = 200,
  ) {}

  run(work: Work): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ work, resolve, reject });
      if (!this.flushing) {
        this.flushing = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    while (this.queue.length) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        await this.db.transaction().execute(async (trx) => {
          for (const item of batch) await item.work(trx);
        });
        for (const item of batch) item.resolve();
      } catch {
        for (const item of batch) {
          try {
            await this.db.transaction().execute((trx) => item.work(trx));
            item.resolve();
          } catch (e) {
            item.reject(e);
          }
        }
      }
    }
    this.flushing = false;
  }
}
