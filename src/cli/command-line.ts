import { readFileSync } from 'node:fs';
import type { Command } from 'commander';

// What every command shares once they are all defined: --version, and usage errors as the
// one-line problem followed by that command's usage line (--help still prints the full help).

/** The version in package.json (two folders up from this file, in src/ and in dist/ alike). */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/** "usage: gatehouse user passwd [options] <username>" */
export function usageLine(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return `usage: ${names.join(' ')} ${cmd.usage()}`;
}

function* commandTree(cmd: Command): Generator<Command> {
  yield cmd;
  for (const sub of cmd.commands) yield* commandTree(sub);
}

/** "error: unknown option '--x'\n(Did you mean --y?)" → "gatehouse: unknown option '--x' (did you mean --y?)" */
function oneLine(message: string): string {
  return message.replace(/^error: /, 'gatehouse: ').replace(/\n\(Did you mean (.+)\?\)/, ' (did you mean $1?)');
}

/** Adds --version, sets up the usage errors of every command, then parses the command line. */
export function parseCommandLine(program: Command, argv: readonly string[] = process.argv): Promise<Command> {
  program.version(packageVersion(), '-V, --version', 'print the version of gatehouse');
  for (const cmd of commandTree(program)) {
    cmd.configureOutput({ outputError: (message, write) => write(oneLine(message)) }).showHelpAfterError(usageLine(cmd));
  }
  return program.parseAsync(argv as string[]);
}
