/**
 * Long work cut into pieces (a bulk job's chunks), run at most `width` pieces at a time across all
 * who queue here, each after the event loop has turned once. With a width of 1 — work that runs
 * on the event loop itself, as SQLite's statements do — the server reads its sockets and answers
 * other requests between any two pieces, however many jobs are running. Pieces start in the order
 * queued; one that fails fails only its caller.
 */
export class Turns {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly width = 1) {
    if (!(width >= 1)) throw new Error(`a width of at least 1, not ${width}`);
  }

  async take<T>(piece: () => Promise<T> | T): Promise<T> {
    // A free place is taken at once; otherwise a finishing piece hands its place over.
    if (this.running < this.width) this.running++;
    else await new Promise<void>((resume) => this.waiting.push(resume));
    try {
      await new Promise((r) => setImmediate(r));
      return await piece();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
