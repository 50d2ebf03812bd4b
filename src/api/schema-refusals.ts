// The two ways a schema change is refused (api/schema-evolution.ts), apart so that the CLI can tell
// them without loading the evolution code.

/** The config's changes strand stored records: `serve` stops (exit 2). */
export class SchemaChangesRefused extends Error {
  constructor(readonly lines: string[]) {
    super(`the config changes collections in ways that strand stored records:\n${lines.map((l) => `  ${l}`).join('\n')}`);
  }
}

/** A migration that cannot run: what stands in its way. */
export class MigrationRefused extends Error {
  constructor(readonly lines: string[]) {
    super(lines.join('\n'));
  }
}
