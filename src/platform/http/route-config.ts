// Per-route switches read by the cross-cutting hooks.
declare module 'fastify' {
  interface FastifyContextConfig {
    /** Answers even in maintenance mode and under overload (GET /health). */
    alwaysAvailable?: boolean;
    /** An HTML page (login, consent): skips the JSON-only Accept rule. */
    html?: boolean;
    /** Does its own content negotiation (attachment downloads). */
    negotiates?: boolean;
    /** Reachable without the X-Forwarded-Proto check (load balancer health checks). */
    anyProtocol?: boolean;
  }
}
export {};
