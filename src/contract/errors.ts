// Errors of the model layer that every entry point (CLI, HTTP, admin) turns into its own answer:
// a one-line message on the command line, a 400 / 409 with `detail` over HTTP. `modelProblem` is
// the one translation all of them start from (docs/architecture.md, "Rules of thumb").

/** Input that breaks a rule; `detail` names each field and what is wrong with it. */
export class InvalidInput extends Error {
  constructor(
    message: string,
    readonly detail: Record<string, string>,
  ) {
    super(message);
  }
}

/** The thing to create exists already. */
export class AlreadyExists extends Error {}

/** Only an item of another kind has this (a public client has no secret); `field` names what it lacks. */
export class NotApplicable extends Error {
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(message);
  }
}

/** Too many of something in a window (the 5 mails an address may get in an hour); `field` names what. */
export class TooMany extends Error {
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(message);
  }
}

/** A model error as every entry point answers it. */
export interface ModelProblem {
  /** 400 for a broken rule or an item of the wrong kind, 409 for a duplicate, 429 for too many. */
  status: 400 | 409 | 429;
  /** The model's one-line message. */
  message: string;
  /** What is wrong, per field. */
  detail: Record<string, string>;
  /** A broken rule of the input (InvalidInput): the fields say what to fix, the message sums them up. */
  byField: boolean;
}

/**
 * The answer to a model error, or null when `e` is not one (rethrow it). `duplicate` names the
 * field a duplicate is about (the admin API's `id`, a console form's field).
 */
export function modelProblem(e: unknown, duplicate = 'id'): ModelProblem | null {
  if (e instanceof InvalidInput) return { status: 400, message: e.message, detail: e.detail, byField: true };
  if (e instanceof AlreadyExists) return { status: 409, message: e.message, detail: { [duplicate]: 'already exists' }, byField: false };
  if (e instanceof NotApplicable) return { status: 400, message: e.message, detail: { [e.field]: e.message }, byField: false };
  if (e instanceof TooMany) return { status: 429, message: e.message, detail: { [e.field]: e.message }, byField: false };
  return null;
}

/** A model's message as a sentence on a page: capitalised, with its full stop (and `then`, e.g. "Nothing was changed."). */
export function asSentence(message: string, then = ''): string {
  return `${message.charAt(0).toUpperCase()}${message.slice(1)}.${then ? ` ${then}` : ''}`;
}
