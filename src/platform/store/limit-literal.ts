import {
  LimitNode,
  SelectQueryNode,
  ValueNode,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';

/**
 * A LIMIT that may be written into SQL text (see LimitAsLiteral): a whole number, at least 0, as
 * the program's page sizes are; null for any other value, which stays bound.
 */
export function literalLimit(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

/**
 * The Kysely plugin (SQLite) that writes a statement's LIMIT into its SQL text instead of binding
 * it: SQLite plans a `LIMIT ?` from its value, so every run of a cached statement (which rebinds
 * all parameters) would parse and plan it again. A statement per distinct limit is the cost; only
 * numbers from the program reach a LIMIT, anything else stays bound. Measurements:
 * docs/benchmarks.md ("Why the SQLite store is set up as it is").
 */
export class LimitAsLiteral implements KyselyPlugin {
  transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
    if (!SelectQueryNode.is(node) || !node.limit || !ValueNode.is(node.limit.limit) || node.limit.limit.immediate) return node;
    const value = literalLimit(node.limit.limit.value);
    if (value === null) return node;
    return SelectQueryNode.cloneWithLimit(node, LimitNode.create(ValueNode.createImmediate(value)));
  }

  async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return result;
  }
}
