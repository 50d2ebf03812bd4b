import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { configFrom, withCommonOptions, type CommonOptions } from './common.js';
import type { Role } from '../platform/config/load.js';

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new InvalidArgumentError('must be a port number (0-65535)');
  return port;
}

function parseMetricsPort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port < 1 || port > 65535) throw new InvalidArgumentError('must be a port number (1-65535)');
  return port;
}

function parseRole(value: string): Role {
  if (value !== 'all' && value !== 'auth' && value !== 'resource') throw new InvalidArgumentError('must be all, auth or resource');
  return value;
}

export function serveCommand(program: Command): void {
  withCommonOptions(program.command('serve'))
    .description('serve the resource API and/or the authorization server over HTTPS')
    .option('--port <n>', 'port to listen on (0: any free port)', parsePort)
    .option('--host <h>', 'address to listen on')
    .option('--role <role>', 'all | auth | resource', parseRole, 'all')
    .option('--metrics-port <n>', 'serve Prometheus metrics over plain HTTP on this port (metrics.host, default 127.0.0.1)', parseMetricsPort)
    .action(async (opts: CommonOptions & { port?: number; host?: string; role: Role; metricsPort?: number }) => {
      const config = configFrom(opts);
      // Imported here, not above: the other commands (and a config error) do not load the HTTP stack.
      const { startServer } = await import('../main/server.js');
      const server = await startServer(config);
      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) return;
        stopping = true;
        server.app.log.info({ signal }, 'draining in-flight requests and stopping');
        const force = setTimeout(() => process.exit(1), 30_000);
        force.unref();
        server.close().then(
          () => process.exit(0),
          (err) => {
            server.app.log.error({ err }, 'error while stopping');
            process.exit(1);
          },
        );
      };
      process.on('SIGTERM', () => stop('SIGTERM'));
      process.on('SIGINT', () => stop('SIGINT'));
    });
}
