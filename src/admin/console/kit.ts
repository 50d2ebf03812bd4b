import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { AppContext } from '../../contract/context.js';
import { asSentence, modelProblem } from '../../contract/errors.js';
import { Params } from '../../authserver/params.js';
import type { User } from '../../authserver/model/users.js';
import { routeMethods } from '../../platform/http/routes.js';
import { readMaintenance } from '../../platform/store/settings.js';
import { html, sendPage, type Html, type Problem } from '../../platform/http/html/index.js';
import { consoleHeader, maintenanceBanner, type Chrome, type Section } from './chrome.js';
import { messageBody, type Errors } from './components.js';
import { consoleCsrf, consolePath, consoleUser, endConsoleSession } from './session.js';
import { signInBody, type SignInView } from './signin-view.js';

// What every console handler shares: sending a page on the HTML kit (signed in: with the bar;
// signed out: the narrow column), the guard that lets only a signed-in admin through, and the
// model's errors as form errors.

/** The signed-in admin of a request, the token for its forms, and the posted form. */
export interface Signed {
  admin: User;
  csrf: string;
  form: Params;
}

export type Handler = (request: FastifyRequest, reply: FastifyReply, s: Signed) => Promise<FastifyReply>;

/** The outcome of a model call: its value, or what to show on the form (`message`: the model's own). */
export type Outcome<T> = { ok: T } | (Refusal & { status: number });

/** A form the model refused: the summary above it, the errors by field, the model's own message. */
export type Refusal = { error: string; errors: Errors; message: string };

/** A refusal as the JSON error body. */
export function refused(r: Refusal | undefined): Problem | undefined {
  return r && { error: r.message, detail: r.errors };
}

/** The form a browser posted (any other body counts as an empty form: its CSRF check fails). */
export function formOf(request: FastifyRequest): Params {
  return request.body instanceof Params ? request.body : new Params(new Map());
}

/** A sign-in target after signing in: a path of the console, nothing else. */
export function safeNext(base: string, next: string | undefined): string | null {
  if (!next || next.length > 2000) return null;
  if (next !== base && !next.startsWith(`${base}/`) && !next.startsWith(`${base}?`)) return null;
  // No '//' (another host), no dot segments (a browser resolves /admin/../x, and %2e%2e, to /x).
  if (next.includes('//') || next.includes('..') || /%2e/i.test(next) || !/^[A-Za-z0-9._~%/?&=+:@-]+$/.test(next)) return null;
  return next;
}

export class ConsoleKit {
  readonly base: string;

  constructor(readonly ctx: AppContext) {
    this.base = consolePath(ctx);
  }

  /** Registers one console URL: an HTML route that answers in maintenance mode too. */
  route(app: FastifyInstance, url: string, handlers: { GET?: RouteHandlerMethod; POST?: RouteHandlerMethod }): void {
    routeMethods(app, url, handlers, { config: { html: true, alwaysAvailable: true } });
  }

  /**
   * A page in the signed-in layout. A refusal (status ≥ 400) goes as the JSON error body instead to
   * a client that prefers JSON (`problem`, else the page's title).
   */
  async page(reply: FastifyReply, s: Signed, status: number, title: string, section: Section | null, body: Html, problem?: Problem): Promise<FastifyReply> {
    const maintenance = await readMaintenance(this.ctx.store);
    const chrome: Chrome = { base: this.base, username: s.admin.username, csrf: s.csrf, section, maintenance: maintenance.on };
    return sendPage(reply, { kind: 'console', basePath: this.ctx.config.basePath, status, title, problem, header: consoleHeader(this.base, chrome), body: html`${maintenanceBanner(chrome)}${body}` });
  }

  /** A page without navigation (signed out, refused, errors); JSON for a refusal to a JSON client, as `page`. */
  bare(reply: FastifyReply, status: number, title: string, body: Html, problem?: Problem): FastifyReply {
    return sendPage(reply, { kind: 'console', basePath: this.ctx.config.basePath, status, title, problem, header: consoleHeader(this.base), body, narrow: true });
  }

  /** A short message in the signed-in layout (a refused action, a missing item). */
  message(reply: FastifyReply, s: Signed, status: number, title: string, text: string, section: Section | null): Promise<FastifyReply> {
    return this.page(reply, s, status, title, section, messageBody(title, text, html`<p><a href="${this.base}${section && section !== 'dashboard' ? `/${section}` : ''}">Back</a></p>`));
  }

  async signIn(request: FastifyRequest, reply: FastifyReply, status: number, view: Omit<SignInView, 'base' | 'csrf'> = {}, problem?: Problem): Promise<FastifyReply> {
    const csrf = await consoleCsrf(this.ctx, request, reply);
    return this.bare(reply, status, 'Sign in', signInBody({ ...view, base: this.base, csrf }), problem ?? (view.error ? { error: view.error.replace(/\.$/, '') } : undefined));
  }

  notAdmin(reply: FastifyReply, username: string): FastifyReply {
    return this.bare(
      reply,
      403,
      'Not an admin',
      messageBody('Not an admin', `${username} is not an admin: the console is for admins only.`, html`<p><a href="${this.base}">Sign in as someone else</a></p>`),
      { error: 'The admin console is for admins only', detail: { username: 'is not an admin' } },
    );
  }

  /** Only a signed-in admin gets to `handler`; others get the sign-in page (401) or "not an admin" (403). */
  guard(handler: Handler): RouteHandlerMethod {
    return async (request, reply) => {
      const user = await consoleUser(this.ctx, request);
      if (!user) {
        const next = request.method === 'GET' ? (safeNext(this.base, request.url) ?? undefined) : undefined;
        return this.signIn(request, reply, 401, { next, info: 'Sign in to continue.' }, { error: 'Sign in to the admin console first', detail: { session: 'none, or it has ended' } });
      }
      if (!user.admin) {
        // The right was taken away since: this session is of no use any more.
        await endConsoleSession(this.ctx, request, reply);
        return this.notAdmin(reply, user.username);
      }
      const csrf = await consoleCsrf(this.ctx, request, reply);
      return handler(request, reply, { admin: user, csrf, form: formOf(request) });
    };
  }

  redirect(reply: FastifyReply, path: string): FastifyReply {
    return reply.redirect(`${this.base}${path}`, 303);
  }

  /** Runs a model call; its rule errors become form errors (`duplicate` names the field a duplicate is about). */
  static async attempt<T>(fn: () => Promise<T>, duplicate: string): Promise<Outcome<T>> {
    try {
      return { ok: await fn() };
    } catch (e) {
      const problem = modelProblem(e, duplicate);
      if (!problem) throw e;
      const error = problem.byField ? 'Check the highlighted fields.' : asSentence(problem.message);
      return { error, errors: problem.detail, status: problem.status, message: problem.message };
    }
  }
}
