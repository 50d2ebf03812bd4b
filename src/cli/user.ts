import type { Command } from 'commander';

export function userCommand(_program: Command): void {}
