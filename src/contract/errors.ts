// Errors of the model layer that every entry point (CLI, HTTP, admin) turns into its own answer:
// a one-line message on the command line, a 400 / 409 with `detail` over HTTP.

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

/** Only an item of another kind has this (a public client has no secret). */
export class NotApplicable extends Error {}
