// The little of each untyped benchmark dependency that bench/ uses.
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';
  namespace autocannon {
    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string;
      setupRequest?: (req: Request, context: Record<string, unknown>) => Request;
    }
    interface Options {
      url: string;
      connections?: number;
      pipelining?: number;
      duration?: number;
      requests?: Request[];
    }
    interface Result {
      duration: number;
      errors: number;
      timeouts: number;
      '2xx': number;
      non2xx: number;
      statusCodeStats?: Record<string, { count: number }>;
    }
  }
  function autocannon(opts: autocannon.Options, cb: (err: Error | null, result: autocannon.Result) => void): EventEmitter;
  export default autocannon;
}

declare module 'json-server' {
  import type { RequestListener } from 'node:http';
  type App = RequestListener & { use(handler: unknown): App };
  const jsonServer: { create(): App; defaults(opts?: { logger?: boolean }): unknown; router(db: unknown): unknown };
  export default jsonServer;
}

declare module 'oidc-provider' {
  import type { RequestListener } from 'node:http';
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): RequestListener;
  }
}
