/**
 * The embedded default store: PGlite (Postgres in WebAssembly) with pgvector, opened by this
 * process alone. PGlite has no lock of its own and two openers corrupt the data directory, so
 * an exclusive lock file guards it; other processes and psql reach it through the socket server,
 * behind a door that asks for the password in the store's password file (db/pglite-socket-door.ts).
 */
import { existsSync, linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import type { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import type { Database, Queryable, QueryResult, SqlParam } from './database';
import { preparePgliteArtifacts } from './pglite-artifacts';
import type { SocketDoor, SocketLog } from './pglite-socket-door';
import { initDataDir } from './pglite-template';
import {
  ensurePrivateDir,
  loadOrCreateSocketPassword,
  readSocketPassword,
  SOCKET_NAME,
  SocketPasswordError,
  socketFolder,
  socketPasswordFile,
  withoutPassword,
  withPassword,
} from './store-files';

export class StoreLockedError extends Error {
  override readonly name = 'StoreLockedError';
  constructor(
    readonly lockFile: string,
    readonly holder: LockInfo,
  ) {
    super(
      `the embedded store ${path.dirname(lockFile)} is in use by process ${holder.pid}` +
        (holder.databaseUrl ? ` (reach it at ${holder.databaseUrl})` : '') +
        '; stop that process, or point DATABASE_URL and TEMPORAL_ADDRESS at what it serves',
    );
  }
}

/**
 * What the lock file records, so a second process can find the services of the first. The file is
 * private to its user (0600) and holds no secret: `databaseUrl` has no password; readers take it
 * from the password file (`socketUrlOf`).
 */
export interface LockInfo {
  pid: number;
  startedAt: string;
  databaseUrl?: string;
  temporalAddress?: string;
  temporalUiUrl?: string;
  apiUrl?: string;
  /** The embedded Temporal dev server this process started, so a successor can stop an orphan. */
  temporalPid?: number;
  /** True while the holder serves others (`gleaner dev`): later processes attach instead of failing. */
  serving?: boolean;
  /**
   * A holder without a socket that lets go of the store (infra/store-handover.ts): 'soon', a reading
   * command that holds it for a moment; 'on-request', a long-lived `gleaner mcp` that closes it when
   * sent STORE_RELEASE_SIGNAL. Other processes wait for either instead of being refused.
   */
  yields?: 'soon' | 'on-request';
}

/** Asks a holder whose lock says `yields: 'on-request'` to let go of the store. */
export const STORE_RELEASE_SIGNAL: NodeJS.Signals = 'SIGUSR2';

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function readLock(lockFile: string): LockInfo | undefined {
  const info = readLockFile(lockFile);
  return info && processAlive(info.pid) ? info : undefined;
}

/** The lock file's record whether or not its process still lives (a stale lock says what it left). */
export function readLockFile(lockFile: string): LockInfo | undefined {
  try {
    return JSON.parse(readFileSync(lockFile, 'utf8')) as LockInfo;
  } catch {
    return undefined;
  }
}

/**
 * The socket URL of the store whose lock says `holder`, with the password from the store's password
 * file: what a reading command or an attaching process connects with.
 */
export function socketUrlOf(lockFile: string, holder: LockInfo): string | undefined {
  if (!holder.databaseUrl) return undefined;
  const file = socketPasswordFile(lockFile.replace(/\.lock$/, ''));
  let password: string;
  try {
    password = readSocketPassword(file);
  } catch (error) {
    throw new SocketPasswordError(
      `cannot read the password of the embedded store's socket (${(error as Error).message}); ` +
        `run this as the user who runs gleaner process ${holder.pid}`,
      { cause: error },
    );
  }
  return withPassword(holder.databaseUrl, password);
}

/**
 * Takes the lock atomically; a lock left by a dead process is taken over. The record is written whole
 * before it appears under the lock's name (link fails when the name exists) and replaced whole by a
 * rename: a process reading the lock never finds it empty or half written, which it would take for a
 * stale lock and remove while its holder runs on.
 */
export function acquireLock(
  lockFile: string,
  initial: Pick<LockInfo, 'yields'> = {},
): (update: Partial<LockInfo>) => void {
  ensurePrivateDir(path.dirname(lockFile));
  const info: LockInfo = { pid: process.pid, startedAt: new Date().toISOString(), ...initial };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeLockWhole(lockFile, info, (temp) => linkSync(temp, lockFile));
      return (update) => {
        Object.assign(info, update);
        if (info.databaseUrl) info.databaseUrl = withoutPassword(info.databaseUrl);
        writeLockWhole(lockFile, info, (temp) => renameSync(temp, lockFile));
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const found = readLockFile(lockFile);
      if (found && processAlive(found.pid)) throw new StoreLockedError(lockFile, found);
      removeStaleLock(lockFile, found);
    }
  }
  throw new Error(`could not take the lock ${lockFile}`);
}

function writeLockWhole(lockFile: string, info: LockInfo, place: (temp: string) => void): void {
  const temp = `${lockFile}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify(info), { mode: 0o600 });
  try {
    place(temp);
  } finally {
    rmSync(temp, { force: true });
  }
}

/**
 * Removes a lock whose holder is gone, unless it changed since it was read as `stale`: two processes
 * that both found the same stale lock must not have the second remove the lock the first just took.
 */
export function removeStaleLock(lockFile: string, stale: LockInfo | undefined): void {
  const now = readLockFile(lockFile);
  if (now?.pid !== stale?.pid || now?.startedAt !== stale?.startedAt) return;
  rmSync(lockFile, { force: true });
}

/**
 * PGlite's buffer pool lives in its WebAssembly memory, which grows as pages are read and never
 * shrinks, so a full pool is resident for the life of the process. initdb writes Postgres's 128MB
 * default; the embedded store reads through the OS page cache (NODEFS), which is not this process's
 * RSS, so a smaller pool costs a syscall per miss rather than a disk read (issue 18: the embedded crawl
 * under 1 GB). GLEANER_PGLITE_SHARED_BUFFERS overrides it (a Postgres size such as `64MB`).
 */
function sharedBuffers(): string {
  const value = process.env.GLEANER_PGLITE_SHARED_BUFFERS?.trim();
  if (!value) return DEFAULT_SHARED_BUFFERS;
  if (!/^\d+(kB|MB|GB)$/.test(value))
    throw new Error(
      `GLEANER_PGLITE_SHARED_BUFFERS must be a Postgres size such as 32MB (kB, MB or GB), got ${JSON.stringify(value)}`,
    );
  return value;
}
const DEFAULT_SHARED_BUFFERS = '32MB';

export interface EmbeddedStoreOptions {
  /** Directory holding the PGlite data (created if missing). */
  dataDir: string;
  /** Serve the database on a loopback port for psql and other processes. @default true */
  socket?: boolean;
  /** Written into the lock from its first moment: how this process lets go of the store (LockInfo). */
  yields?: LockInfo['yields'];
  /** Port of the socket server; 0 picks a free one. @default 0 */
  socketPort?: number;
  /**
   * A socket client inside a transaction that sends nothing for this long is disconnected and its
   * transaction rolled back, so it cannot hold the crawl's writes forever. GLEANER_SOCKET_IDLE_IN_TRANSACTION_MS
   * overrides the default.
   * @default 30000
   */
  idleInTransactionTimeoutMs?: number;
  /** Where the socket's door reports refused logins and ended sessions. @default JSON lines on stderr */
  socketLog?: SocketLog;
  /**
   * A new data directory is copied from the migrated template cached in this folder
   * (db/pglite-template.ts); false initialises it in place (initdb, then the opener's migrate()).
   * @default GLEANER_PGLITE_TEMPLATE (`off` or a folder), else node_modules/.cache/gleaner-pglite-template
   */
  templateCacheDir?: string | false;
}

const stderrSocketLog: SocketLog = {
  warn: (fields, message) =>
    process.stderr.write(
      `${JSON.stringify({ level: 'warn', component: 'store-socket', ...fields, msg: message })}\n`,
    ),
};

function idleInTransactionTimeoutMs(option: number | undefined): number {
  if (option !== undefined) return option;
  const value = process.env.GLEANER_SOCKET_IDLE_IN_TRANSACTION_MS?.trim();
  if (!value) return DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS;
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new Error(
      `GLEANER_SOCKET_IDLE_IN_TRANSACTION_MS must be a whole number of milliseconds, got ${JSON.stringify(value)}`,
    );
  return Number(value);
}
const DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS = 30_000;

/** How long a socket client may pause inside one extended query before it counts as gone. */
const MID_QUERY_GRACE_MS = 5_000;

export class PgliteDatabase implements Database {
  readonly kind = 'pglite' as const;
  private socketServer?: PGLiteSocketServer;
  private socketDoor?: SocketDoor;
  /** Private folder of the Unix socket pglite-socket serves on, behind the door. */
  private socketDir?: string;
  /** Settles when the last in-process transaction or socket statement holding the gate is done. */
  private socketGate: Promise<void> = Promise.resolve();
  private inProcessTransaction = false;
  /** Open while a socket client's transaction (BEGIN … COMMIT, or an unfinished extended query) is. */
  private clientTransaction?: { ended: Promise<void>; end: () => void };
  /** A socket client sent Parse/Bind/Execute and not yet the Sync that ends its implicit transaction. */
  private clientMidQuery = false;
  private midQueryTimer?: NodeJS.Timeout;
  /** postgres:// URL of the socket server with its password, when it runs: a secret for psql. */
  socketUrl?: string;

  private constructor(
    private readonly pg: PGlite,
    private readonly lockFile: string,
    /** Records more about this process (Temporal address, API URL) for other processes to find. */
    readonly updateLock: (update: Partial<LockInfo>) => void,
  ) {
    sendBuffersInBinary(pg);
  }

  static async open(options: EmbeddedStoreOptions): Promise<PgliteDatabase> {
    mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    const lockFile = path.join(options.dataDir, '..', `${path.basename(options.dataDir)}.lock`);
    const updateLock = acquireLock(lockFile, options.yields ? { yields: options.yields } : {});
    let db: PgliteDatabase | undefined;
    try {
      // A new directory is a copy of the migrated template, or initialised by a short-lived child
      // (db/pglite-template.ts): initdb's ~830 MB peak and ~150 MB residue never reach this process.
      if (!existsSync(path.join(options.dataDir, 'PG_VERSION')))
        await initDataDir(options.dataDir, options.templateCacheDir);
      // The WebAssembly compiles on V8's threads while this thread loads PGlite's JavaScript, which
      // is imported here and not at the top for that reason (db/pglite-artifacts.ts).
      const artifacts = preparePgliteArtifacts();
      const [{ PGlite }, { vector }] = await Promise.all([
        import('@electric-sql/pglite'),
        import('@electric-sql/pglite-pgvector'),
      ]);
      const pg = await PGlite.create(options.dataDir, {
        ...(await artifacts),
        extensions: { vector },
        startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${sharedBuffers()}`],
      });
      db = new PgliteDatabase(pg, lockFile, updateLock);
      if (options.socket !== false) {
        const password = loadOrCreateSocketPassword(socketPasswordFile(options.dataDir));
        await db.startSocket(
          options.dataDir,
          options.socketPort ?? 0,
          password,
          idleInTransactionTimeoutMs(options.idleInTransactionTimeoutMs),
          options.socketLog ?? stderrSocketLog,
        );
        updateLock({ databaseUrl: db.socketUrl });
      }
      return db;
    } catch (error) {
      await db?.close().catch(() => {});
      rmSync(lockFile, { force: true });
      throw error;
    }
  }

  /** Size of PGlite's WebAssembly memory (it grows and never shrinks), when the module exposes it. */
  wasmMemoryBytes(): number | undefined {
    return (this.pg as unknown as { mod?: { HEAPU8?: Uint8Array } }).mod?.HEAPU8?.buffer.byteLength;
  }

  get lockPath(): string {
    return this.lockFile;
  }

  private async startSocket(
    dataDir: string,
    port: number,
    password: string,
    idleTimeoutMs: number,
    log: SocketLog,
  ): Promise<void> {
    // Imported here: the reading commands open the store without a socket and need not load these.
    const [{ PGLiteSocketServer }, { SocketDoor }, { scramVerifier }] = await Promise.all([
      import('@electric-sql/pglite-socket'),
      import('./pglite-socket-door'),
      import('./scram-server'),
    ]);
    // pglite-socket asks no password, so it listens where only this user can reach it (a 0700
    // folder), and the door on 127.0.0.1 lets in those who know the password.
    this.socketDir = socketFolder(dataDir);
    const upstreamPath = path.join(this.socketDir, SOCKET_NAME);
    this.socketServer = new PGLiteSocketServer({
      db: this.gatedForSockets(),
      path: upstreamPath,
      maxConnections: 64,
    });
    await this.socketServer.start();
    this.socketDoor = new SocketDoor({
      verifier: scramVerifier(password),
      upstreamPath,
      host: '127.0.0.1',
      port,
      idleInTransactionTimeoutMs: idleTimeoutMs,
      log,
      onLastSessionEnded: () => {
        // Back to the settings the store opened with (none of ours are session-level: SET LOCAL only).
        // Through the gate, after the socket server has rolled back what the client left open: a
        // RESET inside that transaction would be undone with it.
        this.query('RESET ALL').catch((error: unknown) =>
          log.warn(
            { err: String(error) },
            'could not reset the embedded store session after its clients left',
          ),
        );
      },
    });
    const chosen = await this.socketDoor.start();
    this.socketUrl = withPassword(
      `postgres://postgres@127.0.0.1:${chosen}/postgres?sslmode=disable`,
      password,
    );
  }

  query<Row>(sql: string, params: readonly SqlParam[] = []): Promise<QueryResult<Row>> {
    return this.outsideClientTransactions(async () => {
      const result = await this.pg.query<Row>(sql, params as unknown[]);
      return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
    });
  }

  exec(sql: string): Promise<void> {
    return this.outsideClientTransactions(async () => {
      await this.pg.exec(sql);
    });
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.outsideClientTransactions(async () => {
      this.inProcessTransaction = true;
      try {
        return await this.pg.transaction(async (tx) =>
          fn({
            query: async <Row>(sql: string, params: readonly SqlParam[] = []) => {
              const result = await tx.query<Row>(sql, params as unknown[]);
              return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
            },
          }),
        );
      } finally {
        this.inProcessTransaction = false;
      }
    });
  }

  /**
   * Runs `fn` while no socket client's statement runs, and keeps them waiting until it is done.
   * PGlite is one Postgres session shared by this process and every socket client, and the socket
   * server serialises statements, not transactions: a client's statement could land inside this
   * process's transaction, and when that client disconnected the server rolled back "its" open
   * transaction, which was ours (a page's store lost while a search read the corpus).
   */
  private withSocketsHeld<T>(fn: () => Promise<T>): Promise<T> {
    const previous = this.socketGate;
    let release!: () => void;
    this.socketGate = new Promise<void>((resolve) => {
      release = resolve;
    });
    return previous.then(fn).finally(release);
  }

  /**
   * Runs this process's statement or transaction with the socket gate held and no socket client's
   * transaction open. The session is shared, so a statement sent while a client (psql, `gleaner
   * search` attached to `gleaner dev`) is between BEGIN and COMMIT would join that transaction and
   * be lost with the client's ROLLBACK or hang-up. So it waits for the client to finish, as it would
   * wait on a lock in a server Postgres.
   */
  private async outsideClientTransactions<T>(fn: () => Promise<T>): Promise<T> {
    for (;;) {
      while (this.clientTransaction) await this.clientTransaction.ended;
      const outcome = await this.withSocketsHeld(async () =>
        this.clientTransaction ? undefined : { value: await fn() },
      );
      if (outcome) return outcome.value;
    }
  }

  /** A socket client's statement: gated, and afterwards notes whether it left a transaction open. */
  private socketStatement<T>(fn: () => Promise<T>): Promise<T> {
    return this.withSocketsHeld(async () => {
      try {
        return await fn();
      } finally {
        this.noteClientSession(this.pg.isInTransaction() || this.clientMidQuery);
      }
    });
  }

  private noteClientSession(open: boolean): void {
    if (open && !this.clientTransaction) {
      let end!: () => void;
      const ended = new Promise<void>((resolve) => {
        end = resolve;
      });
      this.clientTransaction = { ended, end };
    } else if (!open && this.clientTransaction) {
      this.clientTransaction.end();
      this.clientTransaction = undefined;
    }
  }

  /**
   * Follows the client's extended-query messages: after Parse, Bind, Describe, Execute or Close the
   * session is the client's until its Sync (or a simple Query). A client sends the whole sequence
   * at once, so one silent for MID_QUERY_GRACE_MS has hung up mid-sequence; the socket server only
   * rolls back explicit transactions then, so the session is taken back here.
   */
  private noteClientMessage(message: Uint8Array): void {
    const type = String.fromCharCode(message[0] ?? 0);
    if ('PBDEC'.includes(type)) this.clientMidQuery = true;
    else if (type === 'S' || type === 'Q') this.clientMidQuery = false;
    clearTimeout(this.midQueryTimer);
    if (this.clientMidQuery) {
      this.midQueryTimer = setTimeout(() => {
        this.clientMidQuery = false;
        this.noteClientSession(this.pg.isInTransaction());
      }, MID_QUERY_GRACE_MS);
      this.midQueryTimer.unref();
    }
  }

  /** What the socket server sees of PGlite: statements gated, this process's transactions hidden. */
  private gatedForSockets(): PGlite {
    const pg = this.pg;
    return new Proxy(pg, {
      get: (target, property) => {
        if (property === 'runExclusive')
          return <T>(fn: () => Promise<T>) => this.socketStatement(() => target.runExclusive(fn));
        if (property === 'exec') return (sql: string) => this.socketStatement(() => target.exec(sql));
        if (property === 'execProtocolRawStream') {
          return (message: Uint8Array, options: Parameters<PGlite['execProtocolRawStream']>[1]) => {
            this.noteClientMessage(message);
            return target.execProtocolRawStream(message, options);
          };
        }
        if (property === 'isInTransaction')
          return () => !this.inProcessTransaction && target.isInTransaction();
        const value = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }

  async close(): Promise<void> {
    clearTimeout(this.midQueryTimer);
    try {
      await this.socketDoor?.stop();
      await this.socketServer?.stop();
      await this.pg.close();
    } finally {
      if (this.socketDir) rmSync(this.socketDir, { recursive: true, force: true });
      rmSync(this.lockFile, { force: true });
    }
  }
}

/**
 * Makes PGlite send a Buffer (any Uint8Array) parameter in binary, whatever its type, as node-postgres
 * does on native Postgres, so the `Database` seam means the same on both stores. PGlite passes a
 * parameter through the serializer registered for its type, and one with none through `toString()`;
 * only a serializer's Uint8Array result goes out in binary. So every type's serializer hands a
 * Uint8Array on as it is. What this buys: vectors written as `$n::vector[]` in pgvector's binary form
 * (db/vector.ts) skip the WebAssembly build's float parser, ~0.9 ms a 384-d vector, and a bytea (a
 * page body) skips the hex text round trip.
 */
function sendBuffersInBinary(pg: PGlite): void {
  const own = pg.serializers;
  const passBinary = (serialize: ((value: unknown) => string) | undefined) => (value: unknown) =>
    value instanceof Uint8Array ? (value as unknown as string) : serialize ? serialize(value) : String(value);
  const wrapped = new Map<PropertyKey, (value: unknown) => string>();
  pg.serializers = new Proxy(own, {
    get(target, key) {
      let serializer = wrapped.get(key);
      if (!serializer) {
        serializer = passBinary(Reflect.get(target, key) as ((value: unknown) => string) | undefined);
        wrapped.set(key, serializer);
      }
      return serializer;
    },
    set(target, key, value) {
      wrapped.delete(key);
      return Reflect.set(target, key, value);
    },
  });
}
