#!/usr/bin/env node
import { Command } from 'commander';
import { serveCommand } from './serve.js';
import { migrateCommand } from './migrate.js';
import { maintenanceCommand } from './maintenance.js';
import { userCommand } from './user.js';
import { clientCommand } from './client.js';
import { grantCommand } from './grant.js';
import { webhookCommand } from './webhook.js';
import { keysCommand } from './keys.js';
import { backupCommands } from './backup.js';
import { reportAndExit } from './common.js';
import { parseCommandLine } from './command-line.js';

const program = new Command('gatehouse')
  .description('A JSON resource API over HTTPS with an OAuth 2.0 authorization server in front of it')
  .configureOutput({ writeErr: (s) => process.stderr.write(s) });

serveCommand(program);
userCommand(program);
clientCommand(program);
grantCommand(program);
webhookCommand(program);
migrateCommand(program);
maintenanceCommand(program);
keysCommand(program);
backupCommands(program);

parseCommandLine(program).catch(reportAndExit);
