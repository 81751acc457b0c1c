/**
 * Resolves where Temporal and Postgres are. TEMPORAL_ADDRESS and DATABASE_URL point at real
 * services; each one left unset is replaced by its embedded default under GLEANER_HOME: a
 * Temporal dev server with its state on disk, and PGlite with pgvector. A process that owns the
 * embedded store records its endpoints in the store's lock file, so a later `gleaner crawl`
 * can attach to a running `gleaner dev` instead of fighting it for the data directory.
 */
import path from 'node:path';
import { Client } from '@temporalio/client';
import type { Database } from '../db/database';
import { migrate } from '../db/migrate';
import { PgDatabase } from '../db/pg-database';
import { type LockInfo, PgliteDatabase, readLock, socketUrlOf } from '../db/pglite-database';
import { analyzeStaleTables } from '../db/table-statistics';
import type { QueueKind } from '../domain/temporal-names';
import { clearStaleLock } from './embedded-store';
import { gleanerHome, RuntimeError } from './gleaner-home';
import { logger } from './logger';
import { makeFoldersSync } from './make-folders';
import { registerMemorySource } from './memory-sampler';
import { awaitStoreHolder, openWhenFree } from './store-handover';
import { startTemporalDevServer, type TemporalDevServer } from './temporal-cli';
import { connectTemporal } from './temporal-connect';
import {
  ignoredTemporalSettings,
  type TemporalConnectionOptions,
  temporalConnectionOptions,
} from './temporal-connection-options';

/** Workers running in this process: resolves `done` when they stop, rejects if one fails. */
export interface RunningWorkers {
  done: Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * Starts workers once Temporal and the store are up. The caller hands it in (workers/run-workers'
 * startWorkers): workers/ sits above infra/, so this layer never imports it.
 */
export type WorkerStarter = (options: {
  temporalAddress: string;
  /** TLS and API key for TEMPORAL_ADDRESS's cluster; empty for the embedded dev server. */
  temporalConnectionOptions: TemporalConnectionOptions;
  namespace: string;
  queues: readonly QueueKind[];
  db: Database;
}) => Promise<RunningWorkers>;

export interface RuntimeOptions {
  /** Run workers in this process for these queues, started by `start`. @default none */
  workers?: { queues: readonly QueueKind[]; start: WorkerStarter };
  /** Whether this process may be attached to by later processes (true for `gleaner dev`). */
  serve?: boolean;
  /** Also serve the Temporal Web UI when starting the embedded dev server. @default true */
  ui?: boolean;
}

export interface Runtime {
  client: Client;
  db: Database;
  namespace: string;
  temporalAddress: string;
  /** Spread beside `temporalAddress` into any further connection (TLS, API key; empty when embedded). */
  temporalConnectionOptions: TemporalConnectionOptions;
  temporalUiUrl?: string;
  /** A postgres:// URL other processes (and psql) can use; it carries a password (redact it in logs). */
  databaseUrl?: string;
  embedded: { temporal: boolean; database: boolean; attached: boolean };
  workers?: RunningWorkers;
  close(): Promise<void>;
}

export { gleanerHome, RuntimeError };

/** How often an open embedded store checks whether its planner statistics went stale. */
const ANALYZE_EVERY_MS = 10 * 60_000;

export async function openRuntime(options: RuntimeOptions = {}): Promise<Runtime> {
  const home = gleanerHome();
  const namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';
  // Checked before anything starts; empty without TEMPORAL_ADDRESS, so neither the embedded dev
  // server nor a `gleaner dev` this process attaches to (both plain gRPC on loopback) gets them.
  const connectionOptions = temporalConnectionOptions();
  const ignored = ignoredTemporalSettings();
  if (ignored.length > 0)
    process.stderr.write(
      `gleaner: ${ignored.join(', ')} ${ignored.length === 1 ? 'is' : 'are'} set but TEMPORAL_ADDRESS is not: ` +
        'ignored; this process uses the embedded Temporal dev server (set TEMPORAL_ADDRESS for your cluster)\n',
    );
  const cleanups: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const cleanup of cleanups.reverse())
      await cleanup().catch((error) => logger.warn({ err: error }, 'cleanup failed'));
  };

  // Started beside the store (below) and awaited before `close` can run, so a failure of one never
  // leaves the other's process behind.
  let temporalStarting: Promise<TemporalDevServer | undefined> | undefined;
  try {
    let db: Database;
    let databaseUrl = process.env.DATABASE_URL;
    let temporalAddress = process.env.TEMPORAL_ADDRESS;
    let temporalUiUrl: string | undefined;
    const embedded = { temporal: !temporalAddress, database: !databaseUrl, attached: false };

    if (embedded.database) {
      const dataDir = path.join(home, 'pgdata');
      await clearStaleLock(`${dataDir}.lock`);
      // A reading command or `gleaner mcp` lets go of the store in a moment (asked, for mcp).
      const holder = await awaitStoreHolder(`${dataDir}.lock`, readLock(`${dataDir}.lock`));
      if (holder) {
        if (!holder.serving || !holder.databaseUrl) throw busyStore(holder, home);
        databaseUrl = socketUrlOf(`${dataDir}.lock`, holder);
        temporalAddress ??= holder.temporalAddress;
        temporalUiUrl = holder.temporalUiUrl;
        embedded.attached = true;
      }
    }

    // The dev server is a process of its own: it starts while this one opens and migrates the store.
    if (!temporalAddress) {
      makeFoldersSync(home, 0o700);
      temporalStarting = startTemporalDevServer({
        dbFile: path.join(home, 'temporal.db'),
        logFile: path.join(home, 'temporal.log'),
        uiPort: options.ui === false ? false : undefined,
        namespace,
      }).then((started) => {
        cleanups.push(() => started.stop());
        return started;
      });
      // Observed here so a store failure meanwhile is not also an unhandled rejection.
      temporalStarting.catch(() => {});
    }

    if (databaseUrl) {
      db = new PgDatabase(databaseUrl);
      cleanups.push(() => db.close());
    } else {
      makeFoldersSync(home, 0o700);
      const dataDir = path.join(home, 'pgdata');
      // A reading command that took the lock since the wait above lets go in a moment.
      const opened = await openWhenFree(`${dataDir}.lock`, () =>
        PgliteDatabase.open({ dataDir, socketLog: logger.child({ component: 'store-socket' }) }),
      );
      if ('holder' in opened) throw busyStore(opened.holder, home);
      const pglite = opened.store;
      db = pglite;
      registerMemorySource('pgliteWasm', () => pglite.wasmMemoryBytes());
      databaseUrl = pglite.socketUrl;
      cleanups.push(() => pglite.close());
      // Single-user Postgres has no autovacuum: the planner's statistics are brought up to date every
      // few minutes while the store is open (a long crawl, `gleaner dev`) and as it closes, after the
      // workers have stopped writing (db/table-statistics.ts).
      const analyze = async () => {
        const started = performance.now();
        const analyzed = await analyzeStaleTables(pglite);
        if (analyzed.length > 0)
          logger.info(
            { tables: analyzed, ms: Math.round(performance.now() - started) },
            'store statistics updated',
          );
      };
      const timer = setInterval(() => {
        analyze().catch((error: unknown) =>
          logger.warn({ err: error }, 'could not update the store statistics'),
        );
      }, ANALYZE_EVERY_MS).unref();
      cleanups.push(async () => {
        clearInterval(timer);
        await analyze();
      });
    }
    if (!embedded.attached) await migrate(db);

    const server = await temporalStarting;
    if (server) {
      temporalAddress = server.address;
      temporalUiUrl = server.uiUrl;
      if (db instanceof PgliteDatabase) db.updateLock({ temporalPid: server.pid });
    }
    if (!temporalAddress) throw new Error('no Temporal address after starting the dev server');
    // The socket's URL is in the lock already, without its password (PgliteDatabase.open).
    if (db instanceof PgliteDatabase) db.updateLock({ temporalAddress, temporalUiUrl });

    const connection = await connectTemporal(temporalAddress, connectionOptions);
    cleanups.push(() => connection.close());
    const client = new Client({ connection, namespace });

    // Attached to a running `gleaner dev`: its workers serve every queue already.
    let workers: RunningWorkers | undefined;
    if (options.workers && options.workers.queues.length > 0 && !embedded.attached) {
      workers = await options.workers.start({
        temporalAddress,
        temporalConnectionOptions: connectionOptions,
        namespace,
        queues: options.workers.queues,
        db,
      });
      const running = workers;
      cleanups.push(() => running.shutdown());
    }
    // Only now can later processes rely on this one: its workers are polling.
    if (db instanceof PgliteDatabase && options.serve) db.updateLock({ serving: true });

    return {
      client,
      db,
      namespace,
      temporalAddress,
      temporalConnectionOptions: connectionOptions,
      ...(temporalUiUrl ? { temporalUiUrl } : {}),
      ...(databaseUrl ? { databaseUrl } : {}),
      embedded,
      ...(workers ? { workers } : {}),
      close,
    };
  } catch (error) {
    await temporalStarting?.catch(() => {});
    await close();
    throw error;
  }
}

/** Another gleaner process holds the embedded store and does not serve it (it is no `gleaner dev`). */
export class StoreBusyError extends RuntimeError {}

function busyStore(holder: LockInfo, home: string): RuntimeError {
  return new StoreBusyError(
    `another gleaner process (pid ${holder.pid}) is using the embedded store in ${home}; ` +
      'wait for it to finish, or run `gleaner dev` once and let every command attach to it',
  );
}
