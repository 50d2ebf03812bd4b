import { sql, type RawBuilder } from 'kysely';
import type { Store } from '../../platform/store/store.js';

// The filter operators of a list (`<field>[<op>]=<value>`, docs/api.md "Listing: the query
// language"), one row each: the query parser (query.ts), the list plans' SQL (list-plans.ts) and
// the OpenAPI document (openapi.ts) read this table and nothing else. A new operator is a new row
// (and its line in docs/api.md).

/** A filter value as the query parser gives it (booleans are stored as 0/1 on both engines). */
export type FilterValue = string | number | boolean;

/** The types of filter field an operator may apply to (`parent`: the parent field of a nested collection, an id). */
export type FilterFieldType = 'string' | 'integer' | 'number' | 'boolean' | 'parent';

export interface OperatorSpec {
  /**
   * How many values it takes: `one`; `list` (comma-separated, at most MAX_IN); `flag` (true or
   * false: the condition or its negation, nothing bound).
   */
  arity: 'one' | 'list' | 'flag';
  /** What a value is: one of the field's type (checked by it), or `text` taken literally (not empty). */
  value: 'field' | 'text';
  /** The field types that take it, in the order the error messages and OpenAPI list operators. */
  types: readonly FilterFieldType[];
  /**
   * What it means to the SQLite planner: `equality` and `set` may seek the field's index (a
   * compound index after an `equality`); a `range` yields to them (list-plans.ts).
   */
  planner: 'equality' | 'set' | 'range' | 'scan';
  /** OpenAPI: "Only records whose <field> …". */
  description: string;
  /** The values bound for it, in slot order (e.g. a prefix and its upper bound). */
  bind(values: FilterValue[]): FilterValue[];
  /** The WHERE term over `column`, `p` being the parameters bound (`flag`: the value itself). */
  where(column: RawBuilder<unknown>, p: RawBuilder<unknown>[], flag: FilterValue, store: Store): RawBuilder<unknown>;
}

/** `in` takes at most this many values. */
export const MAX_IN = 100;

const ALL: readonly FilterFieldType[] = ['string', 'integer', 'number', 'boolean', 'parent'];
const ORDERED: readonly FilterFieldType[] = ['string', 'integer', 'number'];
const as = (values: FilterValue[]) => values;

/** The operators, by name, in the order they are listed; `eq` is the plain `<field>=<value>`. */
export const OPERATORS = {
  eq: { arity: 'one', value: 'field', types: ALL, planner: 'equality', description: 'equals this value', bind: as, where: (c, p) => sql`${c} = ${p[0]}` },
  ne: { arity: 'one', value: 'field', types: ALL, planner: 'range', description: 'is not equal to', bind: as, where: (c, p) => sql`${c} <> ${p[0]}` },
  gt: { arity: 'one', value: 'field', types: ORDERED, planner: 'range', description: 'is greater than', bind: as, where: (c, p) => sql`${c} > ${p[0]}` },
  gte: { arity: 'one', value: 'field', types: ORDERED, planner: 'range', description: 'is at least', bind: as, where: (c, p) => sql`${c} >= ${p[0]}` },
  lt: { arity: 'one', value: 'field', types: ORDERED, planner: 'range', description: 'is less than', bind: as, where: (c, p) => sql`${c} < ${p[0]}` },
  lte: { arity: 'one', value: 'field', types: ORDERED, planner: 'range', description: 'is at most', bind: as, where: (c, p) => sql`${c} <= ${p[0]}` },
  in: {
    arity: 'list',
    value: 'field',
    types: ALL,
    planner: 'set',
    description: `is one of these comma-separated values (at most ${MAX_IN})`,
    bind: as,
    where: (c, p) => sql`${c} in (${sql.join(p)})`,
  },
  // Served by the field's index: the binary-order range of strings that start with the prefix.
  prefix: {
    arity: 'one',
    value: 'text',
    types: ['string'],
    planner: 'range',
    description: 'starts with (case-sensitive)',
    bind: (values) => {
      const bound = prefixBound(String(values[0]));
      return bound === null ? values : [values[0], bound];
    },
    where: (c, p) => (p.length === 2 ? sql`${c} >= ${p[0]} and ${c} < ${p[1]}` : sql`${c} >= ${p[0]}`),
  },
  // A substring, taken literally, case-insensitive for ASCII letters on both engines (the Store's
  // includesIgnoringAsciiCase says how each engine finds it).
  contains: {
    arity: 'one',
    value: 'text',
    types: ['string'],
    planner: 'scan',
    description: 'contains, ignoring the case of ASCII letters',
    bind: (values) => [asciiLower(String(values[0]))],
    where: (c, p, _flag, store) => store.includesIgnoringAsciiCase(c, p[0]),
  },
  null: {
    arity: 'flag',
    value: 'field',
    types: ['string', 'integer', 'number', 'boolean'],
    planner: 'scan',
    description: 'is absent or null (true), or present (false)',
    bind: () => [],
    where: (c, _p, flag) => (flag ? sql`${c} is null` : sql`${c} is not null`),
  },
} satisfies Record<string, OperatorSpec>;

export type Operator = keyof typeof OPERATORS;

/** One filter: `values` holds one value, or the list of `in`, or the boolean of a flag. */
export interface Condition {
  field: string;
  op: Operator;
  values: FilterValue[];
}

const operatorsFor = (type: FilterFieldType): readonly Operator[] =>
  (Object.keys(OPERATORS) as Operator[]).filter((op) => (OPERATORS[op].types as readonly FilterFieldType[]).includes(type));

/** The operators a type of filter field takes, in table order. */
export const OPERATORS_OF_TYPE: Record<FilterFieldType, readonly Operator[]> = {
  string: operatorsFor('string'),
  integer: operatorsFor('integer'),
  number: operatorsFor('number'),
  boolean: operatorsFor('boolean'),
  parent: operatorsFor('parent'),
};

/** Lower-cases ASCII letters only: what SQLite's lower() does, so both engines match the same rows. */
const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

/** The smallest string above every string that starts with `prefix`, in binary order (null: no bound). */
function prefixBound(prefix: string): string | null {
  const chars = [...prefix];
  while (chars.length) {
    const last = chars.pop()!.codePointAt(0)!;
    if (last < 0x10ffff) return chars.join('') + String.fromCodePoint(last === 0xd7ff ? 0xe000 : last + 1);
  }
  return null;
}
