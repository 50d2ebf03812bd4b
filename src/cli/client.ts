import type { Command } from 'commander';

export function clientCommand(_program: Command): void {}
