#!/usr/bin/env node
import { Command } from 'commander';
import { serveCommand } from './serve.js';
import { migrateCommand } from './migrate.js';
import { maintenanceCommand } from './maintenance.js';
import { userCommand } from './user.js';
import { clientCommand } from './client.js';
import { keysCommand } from './keys.js';
import { backupCommands } from './backup.js';
import { reportAndExit } from './common.js';

const program = new Command('gatehouse')
  .description('A JSON resource API over HTTPS with an OAuth 2.0 authorization server in front of it')
  .showHelpAfterError()
  .configureOutput({ writeErr: (s) => process.stderr.write(s) });

serveCommand(program);
userCommand(program);
clientCommand(program);
migrateCommand(program);
maintenanceCommand(program);
keysCommand(program);
backupCommands(program);

program.parseAsync(process.argv).catch(reportAndExit);
