// Child processes and temporary directories of a benchmark run, and their clean-up: every
// server runs in its own process (so none shares the load generator's event loop) and every
// one of them, with every temp dir, is gone when the run ends — normally, on error or on Ctrl-C.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, fstatSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const children = new Set<ChildProcess>();
const tempDirs = new Set<string>();
let cleanedUp = false;

export function makeTempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

/** Synchronous last resort (process 'exit'): SIGKILL what still runs, delete the temp dirs. */
function cleanUpNow(): void {
  if (cleanedUp) return;
  cleanedUp = true;
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (process.env.BENCH_KEEP === '1') {
    if (tempDirs.size) process.stderr.write(`BENCH_KEEP=1: kept ${[...tempDirs].join(', ')}\n`);
  } else for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
}

/** Graceful clean-up: SIGTERM every child, SIGKILL after a grace period, then delete the temp dirs. */
export async function cleanUp(graceMs = 5000): Promise<void> {
  await Promise.all([...children].map((c) => stopChild(c, graceMs)));
  cleanUpNow();
}

export function installSignalHandlers(): void {
  process.once('exit', cleanUpNow);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\n${signal}: stopping the servers and removing temp dirs\n`);
      cleanUp(2000).finally(() => process.exit(130));
    });
  }
}

export async function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    children.delete(child);
    return;
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
  children.delete(child);
}

export interface ServerProcess {
  name: string;
  child: ChildProcess;
  pid: number;
  url: string;
  logFile: string;
  /** The last bytes of the process's output, for error messages. */
  tail(bytes?: number): string;
  stop(): Promise<void>;
}

export interface SpawnOptions {
  name: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Where stdout and stderr go (a file, so that a chatty server never costs the load generator CPU). */
  logDir: string;
  /** The first capture group is the server's URL. */
  ready: RegExp;
  timeoutMs?: number;
}

/** Starts `node <args>` and resolves once its output matches `ready`. */
export async function spawnServer(opts: SpawnOptions): Promise<ServerProcess> {
  const logFile = path.join(opts.logDir, `${opts.name}.log`);
  const fd = openSync(logFile, 'a');
  // The log is appended to: only what this process writes may tell its address (another server of
  // the same name, e.g. one restarted, wrote its own "listening on" line before).
  const start = fstatSync(fd).size;
  const child = spawn(process.execPath, opts.args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  children.add(child);
  const tail = (bytes = 4000) => {
    try {
      const text = readFileSync(logFile).subarray(start).toString('utf8');
      return text.slice(-bytes);
    } catch {
      return '';
    }
  };
  const url = await new Promise<string>((resolve, reject) => {
    const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
    const onExit = (code: number | null, signal: string | null) => {
      clearInterval(poll);
      reject(new Error(`${opts.name} exited (${signal ?? code}) before listening:\n${tail()}`));
    };
    const poll = setInterval(() => {
      const m = opts.ready.exec(tail(64_000));
      if (m) {
        clearInterval(poll);
        child.off('exit', onExit);
        resolve(m[1]);
      } else if (Date.now() > deadline) {
        clearInterval(poll);
        child.off('exit', onExit);
        reject(new Error(`${opts.name} did not start in ${(opts.timeoutMs ?? 30_000) / 1000} s:\n${tail()}`));
      }
    }, 50);
    child.once('exit', onExit);
  });
  return { name: opts.name, child, pid: child.pid!, url, logFile, tail, stop: () => stopChild(child) };
}
