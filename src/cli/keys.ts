import type { Command } from 'commander';

export function keysCommand(_program: Command): void {}
