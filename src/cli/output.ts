import type { Command } from 'commander';

// How the list commands print: a table for a person at a terminal, JSON for a program (a pipe or
// a file) or with --json. The JSON is the same rows with every field.

type Row = object;

/** A column of the table: a field of the row, or a field with its own rendering. */
export type Column = string | { key: string; show: (value: unknown) => string };

export interface ListOptions {
  json?: boolean;
}

/** Adds --json to a list command. */
export function withJsonOption(cmd: Command): Command {
  return cmd.option('--json', 'print JSON even on a terminal (it is always JSON when piped)');
}

/** JSON when asked for or when stdout is not a terminal; else a table of `columns` (`empty` when there are no rows). */
export function printList(rows: readonly Row[], columns: readonly Column[], opts: ListOptions, empty: string): void {
  process.stdout.write(opts.json || !process.stdout.isTTY ? `${JSON.stringify(rows, null, 2)}\n` : `${rows.length ? formatTable(rows, columns) : empty}\n`);
}

/** Columns left-aligned, two spaces apart, the headers in capitals; no trailing spaces. */
export function formatTable(rows: readonly Row[], columns: readonly Column[]): string {
  const keys = columns.map((c) => (typeof c === 'string' ? c : c.key));
  const lines = [keys.map((k) => k.toUpperCase()), ...rows.map((row) => columns.map((c) => (typeof c === 'string' ? cell(field(row, c)) : c.show(field(row, c.key)))))];
  const widths = keys.map((_, i) => Math.max(...lines.map((l) => l[i].length)));
  return lines.map((l) => l.map((text, i) => (i === l.length - 1 ? text : text.padEnd(widths[i]))).join('  ').trimEnd()).join('\n');
}

const field = (row: Row, key: string): unknown => (row as Record<string, unknown>)[key];

/** One value as table text: nothing is "-", a list is its items separated by commas. */
export function cell(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (Array.isArray(value)) return value.length ? value.map(cell).join(',') : '-';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value).replace(/\s*\n\s*/g, ' ');
}
