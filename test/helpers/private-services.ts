// A Redis and a PostgreSQL of a test's own, on free ports, that the test may stop and start again
// (the machine's shared servers must keep serving the other tests running beside it). Real
// servers from the machine's own packages: redis-server, and PostgreSQL's initdb/pg_ctl run as
// the `postgres` user when the tests run as root (PostgreSQL refuses to run as root).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './server.js';

async function waitForPort(port: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on port ${port} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface PrivateService {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  cleanup(): Promise<void>;
}

export const redisServerAvailable = spawnSync('redis-server', ['--version']).status === 0;

/** A redis-server of the test's own (no persistence), stoppable and restartable on the same port. */
export async function startPrivateRedis(): Promise<PrivateService> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await waitForPort(port, 5000);
  };
  const stop = async () => {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, start, stop, cleanup: stop };
}

function postgresBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  for (const v of versions) if (existsSync(path.join(root, v, 'bin', 'pg_ctl'))) return path.join(root, v, 'bin');
  return null;
}

const pgBin = postgresBin();
const asRoot = process.getuid?.() === 0;
/** PostgreSQL's programs are installed, and a cluster can be made (as `postgres` when root). */
export const privatePostgresAvailable = pgBin !== null && (!asRoot || spawnSync('id', ['postgres']).status === 0);

function runAsOwner(program: string, args: string[]): ReturnType<typeof spawnSync> {
  return asRoot ? spawnSync('runuser', ['-u', 'postgres', '--', program, ...args], { encoding: 'utf8' }) : spawnSync(program, args, { encoding: 'utf8' });
}

/** A PostgreSQL cluster of the test's own (trust auth, database `postgres`), restartable on the same port. */
export async function startPrivatePostgres(): Promise<PrivateService> {
  if (!pgBin) throw new Error('PostgreSQL is not installed');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-pg-'));
  if (asRoot) spawnSync('chown', ['postgres', dir]);
  const data = path.join(dir, 'data');
  const init = runAsOwner(path.join(pgBin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const port = await freePort();
  const pgCtl = (...args: string[]) => {
    const r = runAsOwner(path.join(pgBin, 'pg_ctl'), ['-D', data, ...args]);
    if (r.status !== 0) throw new Error(`pg_ctl ${args[0]} failed: ${r.stderr}${r.stdout}`);
  };
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=off -c max_connections=50`;
  const start = async () => {
    pgCtl('start', '-w', '-l', path.join(dir, 'log'), '-o', options);
    await waitForPort(port, 10_000);
  };
  const stop = async () => pgCtl('stop', '-m', 'fast', '-w');
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    cleanup: async () => {
      try {
        await stop();
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

