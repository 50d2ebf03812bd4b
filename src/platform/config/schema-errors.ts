import type { ErrorObject } from 'ajv';

// Turns what Ajv reports about the config file into one sentence for a person: the dotted field
// (`collections.zoos.filters[1]`) and what is wrong with it. Needs errors from an Ajv instance
// with `verbose: true` (the failing data, schema and parent schema come with each error).
// With `allErrors: false` the last error is the one that stopped validation; the errors before it
// belong to the branches of a failed `anyOf`.

type Schema = Record<string, unknown>;

export interface SchemaProblem {
  field: string;
  problem: string;
}

/** The field and the problem of a failed validation: one sentence, never Ajv's own wording. */
export function describeSchemaErrors(errors: readonly ErrorObject[]): SchemaProblem {
  return explain(errors, errors[errors.length - 1]);
}

function explain(errors: readonly ErrorObject[], err: ErrorObject): SchemaProblem {
  if (err.keyword === 'anyOf') {
    // A union: when the value is of the kind one branch expects (an object where an object or
    // null belongs), what is wrong inside that branch; otherwise the alternatives.
    const branches = err.schema as Schema[];
    const kind = kindOf(err.data);
    let matching = branches.map((b, i) => ({ b, i })).filter(({ b }) => b.const === undefined && accepts(b, kind));
    // Several object branches: the one whose required keys the value has (`{convert: …}` is the convert branch).
    if (matching.length > 1 && kind === 'object') {
      const data = err.data as Record<string, unknown>;
      const keyed = matching.filter(({ b }) => Array.isArray(b.required) && b.required.length > 0 && (b.required as string[]).every((k) => Object.hasOwn(data, k)));
      if (keyed.length === 1) matching = keyed;
    }
    if (matching.length === 1) {
      const prefix = `${err.schemaPath}/${matching[0].i}/`;
      const inner = errors.filter((e) => e.schemaPath.startsWith(prefix));
      if (inner.length) return explain(inner, inner[inner.length - 1]);
    }
    const problem = (err.parentSchema as { problem?: unknown } | undefined)?.problem;
    if (typeof problem === 'string') return { field: fieldOf(err), problem };
    return { field: fieldOf(err), problem: `must be ${alternatives(branches.map(describeBranch))}${got(err.data)}` };
  }
  return { field: fieldOf(err), problem: problemOf(err) };
}

/** The dotted path of the field: `a.b[2].c`; the missing or unknown key is part of it. */
function fieldOf(err: ErrorObject): string {
  let field = err.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? `[${s}]` : `.${s}`))
    .join('')
    .replace(/^\./, '');
  const key =
    err.keyword === 'additionalProperties'
      ? (err.params as { additionalProperty: string }).additionalProperty
      : err.keyword === 'required'
        ? (err.params as { missingProperty: string }).missingProperty
        : undefined;
  if (key !== undefined) field = field ? `${field}.${key}` : key;
  return field;
}

function problemOf(err: ErrorObject): string {
  const params = err.params as Record<string, unknown>;
  const parent = (err.parentSchema ?? {}) as Schema;
  switch (err.keyword) {
    case 'additionalProperties':
      return unknownKey(String(params.additionalProperty), Object.keys((parent.properties as Schema | undefined) ?? {}));
    case 'required':
      return 'is required';
    case 'type':
      return `must be ${typeName(String(params.type))}${got(err.data)}`;
    case 'const':
      return `must be ${String(params.allowedValue)}${got(err.data)}`;
    case 'enum':
      return `must be ${alternatives((params.allowedValues as unknown[]).map(String))}${got(err.data)}`;
    case 'minimum':
      return `must be at least ${String(params.limit)}${got(err.data)}`;
    case 'maximum':
      return `must be at most ${String(params.limit)}${got(err.data)}`;
    case 'exclusiveMinimum':
      return `must be more than ${String(params.limit)}${got(err.data)}`;
    case 'exclusiveMaximum':
      return `must be less than ${String(params.limit)}${got(err.data)}`;
    case 'minLength':
      return params.limit === 1 ? 'must not be empty' : `must have at least ${String(params.limit)} characters`;
    case 'maxLength':
      return `must have at most ${String(params.limit)} characters`;
    case 'minItems':
      return `must list at least ${plural(Number(params.limit), 'item')}`;
    case 'maxItems':
      return `must list at most ${plural(Number(params.limit), 'item')}`;
    case 'minProperties':
      return params.limit === 1 ? 'must not be empty' : `must have at least ${plural(Number(params.limit), 'entry', 'entries')}`;
    case 'pattern':
      return `${typeof parent.problem === 'string' ? parent.problem : `must match the pattern ${String(params.pattern)}`}${got(err.data)}`;
    default:
      return `is not valid${got(err.data)}`;
  }
}

/** "unknown key; did you mean filters?" — the nearest known key, else the list of them. */
export function unknownKey(key: string, known: readonly string[]): string {
  const near = nearestKey(key, known);
  if (near) return `unknown key; did you mean ${near}?`;
  return known.length ? `unknown key; the keys here are ${alternatives(known, 'and')}` : 'unknown key';
}

/**
 * The known key a misspelt one most likely meant: case aside, at most two edits away, or one is
 * the beginning of the other (at least 3 characters). Null when none is near.
 */
export function nearestKey(key: string, known: readonly string[]): string | null {
  const k = key.toLowerCase();
  let best: { name: string; distance: number } | null = null;
  for (const name of known) {
    const n = name.toLowerCase();
    const distance = levenshtein(k, n);
    const prefix = Math.min(k.length, n.length) >= 3 && (n.startsWith(k) || k.startsWith(n));
    if (distance > 2 && !prefix) continue;
    if (!best || distance < best.distance) best = { name, distance };
  }
  return best?.name ?? null;
}

export function levenshtein(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length];
}

type Kind = 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object';

function kindOf(value: unknown): Kind {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value as Kind;
}

function accepts(branch: Schema, kind: Kind): boolean {
  const types = branch.type === undefined ? null : ([] as unknown[]).concat(branch.type);
  return types === null || types.some((t) => t === kind || (t === 'integer' && kind === 'number'));
}

function describeBranch(branch: Schema): string {
  if (branch.const !== undefined) return String(branch.const);
  if (Array.isArray(branch.enum)) return alternatives(branch.enum.map(String));
  if (branch.type !== undefined) return alternatives(([] as unknown[]).concat(branch.type).map((t) => typeName(String(t))));
  return 'something else';
}

const TYPE_NAMES: Record<string, string> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'a boolean (true or false)',
  object: 'a mapping',
  array: 'a list',
  null: 'null',
};

function typeName(type: string): string {
  return TYPE_NAMES[type] ?? type;
}

/** ", got <value>": what the file holds, quoted when a string, shortened when long. */
function got(value: unknown): string {
  if (value === undefined) return '';
  if (Array.isArray(value)) return ', got a list';
  if (value !== null && typeof value === 'object') return ', got a mapping';
  const text = JSON.stringify(value);
  return `, got ${text.length > 40 ? `${text.slice(0, 37)}..."` : text}`;
}

/** "a, b or c" (duplicates once). */
function alternatives(items: readonly string[], conjunction = 'or'): string {
  const unique = [...new Set(items)];
  return unique.length <= 1 ? (unique[0] ?? '') : `${unique.slice(0, -1).join(', ')} ${conjunction} ${unique[unique.length - 1]}`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
