import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, closeSync, constants, openSync, readFileSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { Connection } from '@temporalio/client';
import { allowlistedEnv } from './child-env';
import { freePort, isPortFree } from './free-port';
import { makeFoldersSync } from './make-folders';
import { toolsDir } from './tools-dir';
import { startUiHostGuard, type UiHostGuard } from './ui-host-guard';

export type SearchAttributeKind = 'Text' | 'Keyword' | 'Int' | 'Double' | 'Bool' | 'Datetime' | 'KeywordList';

export interface TemporalDevServerOptions {
  /** SQLite file for the server's state; without it everything is lost when the server stops. */
  dbFile?: string;
  port?: number;
  /**
   * Web UI port users are given; `false` runs headless. Defaults to a free port so operators get the
   * UI. The UI itself listens on an internal loopback port behind a Host-checking proxy on this one
   * (infra/ui-host-guard.ts).
   */
  uiPort?: number | false;
  /** Extra namespace to create (the `default` namespace always exists). */
  namespace?: string;
  /** Server output goes here (appended) instead of being kept in memory. */
  logFile?: string;
  searchAttributes?: Record<string, SearchAttributeKind>;
  /** Server dynamic config; merged over DEV_SERVER_DYNAMIC_CONFIG and the HTTP API's allowed hosts. */
  dynamicConfig?: Record<string, unknown>;
  startTimeoutMs?: number;
}

export interface TemporalDevServer {
  /** host:port of the gRPC frontend. */
  address: string;
  /** The Web UI through its Host guard (the advertised port), when not headless. */
  uiUrl?: string;
  /** host:port of the frontend's HTTP API (loopback Host names only). */
  httpAddress: string;
  namespace: string;
  pid: number;
  /** SIGTERM, then SIGKILL after 10 s; resolves once the process is gone and the UI's guard closed. */
  stop(): Promise<void>;
  /** Defaults to SIGKILL, i.e. a crash; call stop() afterwards to wait for the exit. */
  kill(signal?: NodeJS.Signals): void;
}

const STOP_GRACE_MS = 10_000;

/**
 * The crawler times every politeness gap with a durable timer, so timer latency is crawl speed.
 * - `timerProcessorMaxTimeShift` (1 s by default) lets the timer queue fire up to that late, which
 *   would stretch sub-second gaps to about a second: 20 ms here.
 * - `timerProcessorMaxPollRPS` (20 by default) rate-limits reads of due timers per shard; the dev
 *   server has one shard, so with many origins due timers queued behind the limiter and fired
 *   160 ms late on average (bench:politeness, H = 20, δ = 0.5 s); at 1,000 they fire 9 ms late.
 * - `transferProcessorMaxPollRPS` (20 by default) limits the same way the reads that hand new
 *   workflow and activity tasks to matching: at 1,000 a workflow task waits 37 ms instead of 64 ms
 *   for a worker at H = 20 (10 ms instead of 34 ms at H = 5), bench:politeness 0.532 → 0.559.
 * - `numTaskqueueReadPartitions` / `WritePartitions` (4 by default) split each task queue into
 *   partitions that forward tasks to one another when a poller waits on another partition. One
 *   server process gains nothing from the split: with one partition, bench:politeness (H = 20,
 *   two-core AVX2 machine) read a completed activity → next fetch scheduled of 70 ms instead of
 *   96-140 ms and an activity's queue wait of 23 ms instead of 33-56 ms.
 * docs/runbooks.md gives operators the same values for a real cluster.
 */
export const DEV_SERVER_DYNAMIC_CONFIG: Readonly<Record<string, unknown>> = {
  'history.timerProcessorMaxTimeShift': '20ms',
  'history.timerProcessorMaxPollRPS': 1000,
  'history.transferProcessorMaxPollRPS': 1000,
  'matching.numTaskqueueReadPartitions': 1,
  'matching.numTaskqueueWritePartitions': 1,
};

/**
 * The frontend's HTTP API (`--http-port`, on loopback) answers any Host too, so a DNS-rebinding page
 * that found its port could list and start workflows: only loopback names are served (the server
 * compares the name, any port; others get 403 "Host not allowed").
 */
const DEV_SERVER_HTTP_ALLOWED_HOSTS: Readonly<Record<string, unknown>> = {
  'frontend.httpAllowedHosts': ['127.0.0.1', 'localhost'],
};
const LOG_TAIL_LINES = 40;
const LOG_HEAD_LINES = 20;
/** Starts tried before a failure is reported. */
const START_ATTEMPTS = 3;

/**
 * What the dev server may see of our environment: the Go runtime's knobs, its config and cache
 * folders and CA bundles besides the basics (infra/child-env.ts). Not TEMPORAL_* (it is the server
 * here, not a client) and none of gleaner's secrets.
 */
const DEV_SERVER_ENV = [
  'GOMAXPROCS',
  'GOMEMLIMIT',
  'GOGC',
  'GODEBUG',
  'XDG_CONFIG_HOME',
  'XDG_CACHE_HOME',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
];

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** GLEANER_TEMPORAL_BIN wins, then `temporal` on PATH, then the copy scripts/setup.sh installs. */
export function findTemporalBinary(): string | undefined {
  const fromEnv = process.env.GLEANER_TEMPORAL_BIN;
  if (fromEnv) return isExecutable(fromEnv) ? fromEnv : undefined;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && isExecutable(join(dir, 'temporal'))) return join(dir, 'temporal');
  }
  const local = join(toolsDir(), 'bin', 'temporal');
  return isExecutable(local) ? local : undefined;
}

function missingBinaryError(): Error {
  const fromEnv = process.env.GLEANER_TEMPORAL_BIN;
  const why = fromEnv ? `GLEANER_TEMPORAL_BIN=${fromEnv} is not executable` : 'Temporal CLI not found';
  return new Error(
    `${why}. Run \`npm run setup\` (installs the pinned temporal binary into .tools/bin/temporal), ` +
      'put `temporal` on PATH, or set GLEANER_TEMPORAL_BIN. Machines with internet access could instead ' +
      "let @temporalio/testing's TestWorkflowEnvironment.createLocal() download the dev server.",
  );
}

/**
 * Keeps the first and the last lines of the server's output, enough to explain a failed start: a
 * Go panic's stack fills the tail, and what the server said before it is in the head.
 */
class OutputExcerpt {
  private head: string[] = [];
  private lines: string[] = [];
  private dropped = 0;
  private partial = '';

  push(chunk: Buffer): void {
    const parts = (this.partial + chunk.toString('utf8')).split('\n');
    this.partial = parts.pop() ?? '';
    for (const line of parts) {
      if (this.head.length < LOG_HEAD_LINES) this.head.push(line);
      else this.lines.push(line);
    }
    if (this.lines.length > LOG_TAIL_LINES) {
      this.dropped += this.lines.length - LOG_TAIL_LINES;
      this.lines.splice(0, this.lines.length - LOG_TAIL_LINES);
    }
  }

  text(): string {
    const gap = this.dropped > 0 ? [`[... ${this.dropped} lines ...]`] : [];
    return [...this.head, ...gap, ...this.lines, this.partial].filter(Boolean).join('\n');
  }
}

function fileTail(path: string): string {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(-LOG_TAIL_LINES).join('\n');
  } catch {
    return '';
  }
}

function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((done) => {
    const timer = setTimeout(() => done(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      done(true);
    });
  });
}

/**
 * Starts `temporal server start-dev` and resolves once the namespace answers over gRPC. It starts
 * again, up to START_ATTEMPTS times:
 * - when it chose the ports itself and lost one to another process between choosing and binding
 *   (the server binds several, and parallel test files start servers at once), on fresh ones;
 * - when the server exited before it was ready: under heavy load the dev server has been seen to
 *   panic while building its components (exit code 2, a Go stack from its dependency injection),
 *   and a second start succeeded. A server that cannot start at all fails the same way each time,
 *   and the last attempt's output is reported.
 */
export async function startTemporalDevServer(
  opts: TemporalDevServerOptions = {},
): Promise<TemporalDevServer> {
  // The UI's own port is always ours: an explicit uiPort is the guard's, which never says
  // "address already in use" (UiHostGuardListenError).
  const portsOurs = opts.port === undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      return await startDevServerOnce(opts);
    } catch (error) {
      const why = String(error);
      const retry = (portsOurs && /address already in use/.test(why)) || /exited early/.test(why);
      if (!retry || attempt >= START_ATTEMPTS) {
        if (attempt > 1 && error instanceof Error)
          error.message = `${error.message}\n(attempt ${attempt} of ${START_ATTEMPTS})`;
        throw error;
      }
    }
  }
}

/**
 * SQLite's defaults (a rollback journal created, fsynced and deleted per transaction) cost the dev
 * server most of a core at a few hundred state transitions per second. A write-ahead log with
 * synchronous=NORMAL survives a killed server (the fault tests restart it) and loses at most the
 * last transactions on a power cut, which a dev server's state can afford.
 */
const SQLITE_PRAGMAS = ['journal_mode=wal', 'synchronous=normal'];

async function startDevServerOnce(opts: TemporalDevServerOptions): Promise<TemporalDevServer> {
  const bin = findTemporalBinary();
  if (!bin) throw missingBinaryError();
  const host = '127.0.0.1';
  const port = opts.port ?? (await freePort(host));
  const httpPort = await freePort(host);
  // The UI answers any Host, so it listens on a port nobody is given, behind the guard (DESIGN 8).
  const uiPort = opts.uiPort === false ? undefined : await freePort(host);
  // Readiness is judged over gRPC, so an old server still on this port would pass for ours.
  if (opts.port !== undefined && !(await isPortFree(port, host))) {
    throw new Error(`Temporal dev server cannot start: ${host}:${port} is already in use`);
  }
  // Listening before the server starts, so a taken explicit port fails before anything runs.
  const uiGuard =
    uiPort === undefined
      ? undefined
      : await startUiHostGuard({
          host,
          port: typeof opts.uiPort === 'number' ? opts.uiPort : 0,
          target: { host, port: uiPort },
        });
  try {
    return await spawnDevServer(opts, { bin, host, port, httpPort, uiPort, uiGuard });
  } catch (error) {
    await uiGuard?.close();
    throw error;
  }
}

interface DevServerPlan {
  bin: string;
  host: string;
  port: number;
  /** The frontend's HTTP API, chosen here (the server would pick one we could not name). */
  httpPort: number;
  /** The UI's internal port, behind uiGuard; undefined when headless. */
  uiPort: number | undefined;
  uiGuard: UiHostGuard | undefined;
}

async function spawnDevServer(
  opts: TemporalDevServerOptions,
  { bin, host, port, httpPort, uiPort, uiGuard }: DevServerPlan,
): Promise<TemporalDevServer> {
  const namespace = opts.namespace ?? 'default';

  const args = ['server', 'start-dev', '--ip', host, '--port', String(port), '--log-level', 'warn'];
  args.push('--http-port', String(httpPort));
  if (uiPort === undefined) args.push('--headless');
  // The news feed is the UI's only call to the internet; it would just fail here.
  else args.push('--ui-port', String(uiPort), '--ui-disable-news-fetch');
  if (opts.dbFile) {
    const dbFile = resolve(opts.dbFile);
    makeFoldersSync(dirname(dbFile));
    args.push('--db-filename', dbFile);
    for (const pragma of SQLITE_PRAGMAS) args.push('--sqlite-pragma', pragma);
  }
  if (namespace !== 'default') args.push('--namespace', namespace);
  for (const [key, value] of Object.entries({
    ...DEV_SERVER_DYNAMIC_CONFIG,
    ...DEV_SERVER_HTTP_ALLOWED_HOSTS,
    ...opts.dynamicConfig,
  })) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  for (const [name, kind] of Object.entries(opts.searchAttributes ?? {})) {
    args.push('--search-attribute', `${name}=${kind}`);
  }

  const output = new OutputExcerpt();
  let logFd: number | undefined;
  if (opts.logFile) {
    makeFoldersSync(dirname(resolve(opts.logFile)));
    logFd = openSync(opts.logFile, 'a');
  }
  // Own process group, so a terminal's Ctrl-C reaches our shutdown code first and the
  // server is stopped after the workers that still talk to it.
  const child = spawn(bin, args, {
    detached: true,
    stdio: ['ignore', logFd ?? 'pipe', logFd ?? 'pipe'],
    env: allowlistedEnv(process.env, DEV_SERVER_ENV),
  });
  if (logFd !== undefined) closeSync(logFd);
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk));
  const closed = new Promise((done) => child.once('close', done));
  const logText = () => (opts.logFile ? fileTail(opts.logFile) : output.text());

  // A crashed parent must not leave an orphan holding the port and the SQLite file. The exit
  // hook covers a normal exit; the watchdog covers SIGKILL and OOM kills, which run no hook.
  const killOnExit = () => child.kill('SIGKILL');
  process.on('exit', killOnExit);
  if (child.pid !== undefined) startParentWatchdog(child.pid);

  const spawnError = new Promise<Error>((done) => child.once('error', done));
  const address = `${host}:${port}`;
  try {
    await waitUntilReady(child, address, namespace, opts.startTimeoutMs ?? 60_000, spawnError);
  } catch (err) {
    child.kill('SIGKILL');
    // 'close' comes after the output pipes drain, so the log tail below is complete.
    await Promise.race([closed, new Promise((r) => setTimeout(r, STOP_GRACE_MS))]);
    process.off('exit', killOnExit);
    const log = logText();
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(
      `Temporal dev server (${bin} ${args.join(' ')}) failed: ${reason}\n${log ? `--- last server output ---\n${log}` : '(no server output)'}`,
    );
  }

  if (child.pid === undefined) throw new Error('Temporal dev server has no pid');
  return {
    address,
    uiUrl: uiGuard?.url,
    httpAddress: `${host}:${httpPort}`,
    namespace,
    pid: child.pid,
    kill: (signal = 'SIGKILL') => {
      child.kill(signal);
    },
    stop: async () => {
      if (!(await waitForExit(child, 0))) {
        child.kill('SIGTERM');
        if (!(await waitForExit(child, STOP_GRACE_MS))) {
          child.kill('SIGKILL');
          await waitForExit(child, STOP_GRACE_MS);
        }
      }
      process.off('exit', killOnExit);
      await uiGuard?.close();
    },
  };
}

/**
 * A detached shell that stops the server's process group once this process is gone (checked every
 * second), and exits by itself when the server does. Node has no parent-death signal, and the
 * server runs in its own group so that a terminal's Ctrl-C reaches our orderly shutdown first.
 */
function startParentWatchdog(serverPid: number): void {
  const script =
    'while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 1; done; ' +
    'kill -0 "$2" 2>/dev/null || exit 0; kill -s TERM -- "-$2" 2>/dev/null; ' +
    'for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$2" 2>/dev/null || exit 0; sleep 1; done; ' +
    'kill -s KILL -- "-$2" 2>/dev/null';
  const watchdog = spawn(
    '/bin/sh',
    ['-c', script, 'gleaner-watchdog', String(process.pid), String(serverPid)],
    { detached: true, stdio: 'ignore', env: allowlistedEnv(process.env) },
  );
  watchdog.on('error', () => {});
  watchdog.unref();
}

/**
 * The readiness probe's first connection usually comes before the server listens. grpc-js then
 * waits out its reconnect backoff, a second at first, before it tries again: the server answered
 * within ~0.3-0.6 s of its start and was seen ready at ~1.4 s, so every embedded start (each crawl,
 * `gleaner dev`, each test stack) waited ~0.7 s for nothing. Retried every 20-100 ms instead.
 */
const READINESS_CHANNEL_ARGS = {
  'grpc.initial_reconnect_backoff_ms': 20,
  'grpc.min_reconnect_backoff_ms': 20,
  'grpc.max_reconnect_backoff_ms': 100,
};

async function waitUntilReady(
  child: ChildProcess,
  address: string,
  namespace: string,
  timeoutMs: number,
  spawnError: Promise<Error>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = 'no attempt finished';
  const exited = new Promise<string>((done) =>
    child.once('exit', (code, signal) => done(`exited early (code ${code}, signal ${signal})`)),
  );
  const failure = Promise.race([exited, spawnError.then((e) => `could not be spawned: ${e.message}`)]);
  let failed: string | undefined;
  void failure.then((why) => {
    failed = why;
  });

  while (Date.now() < deadline) {
    if (failed) throw new Error(failed);
    try {
      const connection = await Connection.connect({
        address,
        connectTimeout: 2_000,
        channelArgs: READINESS_CHANNEL_ARGS,
      });
      try {
        await connection.workflowService.describeNamespace({ namespace });
        return;
      } finally {
        await connection.close();
      }
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    }
    await Promise.race([new Promise((r) => setTimeout(r, 250)), failure]);
  }
  if (failed) throw new Error(failed);
  throw new Error(
    `not ready on ${address} (namespace ${namespace}) after ${timeoutMs} ms; last error: ${lastError}`,
  );
}
