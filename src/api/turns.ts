/**
 * Long work cut into pieces (a bulk job's chunks), run one piece at a time across all who queue
 * here, each after the event loop has turned once: whatever else is running, the server reads its
 * sockets and answers other requests between any two pieces. Pieces run in the order queued; one
 * that fails fails only its caller.
 */
export class Turns {
  private last: Promise<unknown> = Promise.resolve();

  take<T>(piece: () => Promise<T> | T): Promise<T> {
    const run = this.last.then(() => new Promise((r) => setImmediate(r))).then(piece);
    this.last = run.catch(() => undefined);
    return run;
  }
}
