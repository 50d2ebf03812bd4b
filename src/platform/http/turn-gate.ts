/**
 * Keeps a saturated server accepting connections and reading its sockets.
 *
 * libuv (Node 20 on) accepts one new connection per turn of the event loop, and a turn runs every
 * request whose bytes have arrived: when requests cost milliseconds of the loop (SQLite runs on
 * it), a new connection — a health check among them — waits for seconds (docs/benchmarks.md,
 * "Why the code is as it is": "Taking turns").
 *
 * Requests pass here before their work begins. Once the current turn has spent `budgetMs` on
 * requests, the requests that follow wait, in the order they came, and go in later turns, each
 * after the event loop has polled its sockets (and accepted a connection) again. A later turn
 * lets through as many waiting requests as fit in the budget at what a request has been seen to
 * cost — the time from a request let through to the next request of the same turn, which is its
 * work when it runs on the event loop — and at least one. Work outside requests (a bulk job's
 * chunk between turns) is not counted. Below the budget nothing waits, and a request costs a
 * clock read.
 */
export interface TurnClock {
  /** Milliseconds, monotonic. */
  now(): number;
  /** Runs `fn` after the event loop's next poll for I/O (setImmediate). */
  later(fn: () => void): void;
}

const eventLoop: TurnClock = { now: () => performance.now(), later: (fn) => void setImmediate(fn) };

export class TurnGate {
  /** Event-loop milliseconds per request, a moving average; 0 until measured. */
  private cost = 0;
  /** When this turn began (-1 between turns), and when its latest request went (-1: none since). */
  private turnStarted = -1;
  private lastWent = -1;
  private readonly waiting: { go: () => void; since: number }[] = [];
  private resuming = false;

  constructor(
    private readonly budgetMs: number,
    private readonly clock: TurnClock = eventLoop,
  ) {
    if (!(budgetMs > 0)) throw new Error(`a budget above 0 ms, not ${budgetMs}`);
  }

  /** Whether a request may go on at once (this turn is within its budget and nobody waits). */
  admit(): boolean {
    const now = this.clock.now();
    if (this.turnStarted < 0) {
      this.turnStarted = now;
      this.lastWent = -1;
      // The turn ends when the event loop gets to its immediates; the next starts afresh.
      this.clock.later(() => (this.turnStarted = -1));
    } else if (this.lastWent >= 0) {
      // The request let through last, in this turn, ran in between.
      const spent = now - this.lastWent;
      this.cost = this.cost === 0 ? spent : this.cost * 0.9 + spent * 0.1;
      this.lastWent = -1;
    }
    if (this.waiting.length > 0 || now - this.turnStarted >= this.budgetMs) return false;
    this.lastWent = now;
    return true;
  }

  /** For a request that may not go on at once: resolves when its turn has come, after those that waited before it. */
  wait(): Promise<void> {
    return new Promise<void>((go) => {
      this.waiting.push({ go, since: this.clock.now() });
      if (!this.resuming) {
        this.resuming = true;
        // Past this turn's immediates, then past the next poll: the next turn, after its I/O.
        this.clock.later(() => this.clock.later(() => this.resume()));
      }
    });
  }

  /** Requests waiting for a turn. */
  get queued(): number {
    return this.waiting.length;
  }

  /** How long the first waiting request has waited (0 when none waits), in ms. */
  oldestWait(): number {
    return this.waiting.length ? this.clock.now() - this.waiting[0].since : 0;
  }

  /** What a request is taken to cost, in event-loop ms (0: not measured yet). */
  get perRequest(): number {
    return this.cost;
  }

  /** A turn's share of the waiting requests (they run in the microtasks that follow), the rest in the next turn. */
  private resume(): void {
    const share = this.cost > 0 ? Math.max(1, Math.floor(this.budgetMs / this.cost)) : this.waiting.length;
    for (const w of this.waiting.splice(0, share)) w.go();
    if (this.waiting.length) this.clock.later(() => this.resume());
    else this.resuming = false;
  }
}
