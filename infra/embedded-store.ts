/**
 * The store alone, for commands that only read it (search, status, export, report): no Temporal, no
 * workers, and nothing imported that a cold `gleaner search` would pay for. While another gleaner
 * process holds the embedded store (a crawl, `gleaner dev`), reads go through that process's socket,
 * so reading never waits for a crawl to end. Also the stale-lock recovery that infra/runtime.ts runs
 * before it opens the store for a crawl.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Database } from '../db/database';
import { migrate } from '../db/migrate';
import {
  type LockInfo,
  PgliteDatabase,
  processAlive,
  readLockFile,
  removeStaleLock,
  socketUrlOf,
} from '../db/pglite-database';
import { gleanerHome, RuntimeError } from './gleaner-home';
import { makeFoldersSync } from './make-folders';
import { openWhenFree, STORE_WAIT_MS } from './store-handover';

/** Thrown when a reading command finds no corpus: the message says how to make one. */
export class NoCorpusError extends Error {
  override readonly name = 'NoCorpusError';
}

export interface OpenStoreOptions {
  /** Fail with NoCorpusError instead of creating an empty embedded store. @default false */
  requireCorpus?: boolean;
  /**
   * How this process lets go of a store it opens itself (LockInfo.yields): a reading command closes
   * it as it ends ('soon'); `gleaner mcp` holds it between calls and closes it when asked.
   * @default 'soon'
   */
  yields?: 'soon' | 'on-request';
}

export async function openStore(options: OpenStoreOptions = {}): Promise<Database> {
  if (process.env.DATABASE_URL) return postgres(process.env.DATABASE_URL);
  const home = gleanerHome();
  const dataDir = path.join(home, 'pgdata');
  const lockFile = `${dataDir}.lock`;
  await clearStaleLock(lockFile);
  // A holder without a socket (another reading command, `gleaner mcp`, a crawl still opening) lets
  // go or serves one in a moment: wait for that rather than refuse.
  const opened = await openWhenFree(
    lockFile,
    async () => {
      if (options.requireCorpus && !existsSync(dataDir)) {
        throw new NoCorpusError(
          `no corpus in ${home} yet: crawl something first (gleaner crawl <url> --wait), or set DATABASE_URL`,
        );
      }
      makeFoldersSync(home, 0o700);
      return PgliteDatabase.open({ dataDir, socket: false, yields: options.yields ?? 'soon' });
    },
    { orSocket: true },
  );
  if ('holder' in opened) {
    // The socket asks for the password in the holder's password file (db/store-files.ts).
    const socketUrl = socketUrlOf(lockFile, opened.holder);
    if (socketUrl) return postgres(socketUrl);
    throw new RuntimeError(
      `another gleaner process (pid ${opened.holder.pid}) has held the embedded store in ${home} without serving it ` +
        `for ${Math.round(STORE_WAIT_MS / 1000)} s; try again when it ends, or run \`gleaner dev\` and let every command attach to it`,
    );
  }
  const db = opened.store;
  try {
    await migrate(db);
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}

/**
 * A pool for a reading command, which runs a handful of queries at once at most. `pg` is imported
 * only here: loading it cost a cold search on the embedded store ~60 ms for nothing.
 */
async function postgres(url: string): Promise<Database> {
  const { PgDatabase } = await import('../db/pg-database');
  return new PgDatabase(url, { maxConnections: 2 });
}

/**
 * A lock left by a process that died without cleaning up (kill -9, OOM): its Temporal dev server
 * may still hold temporal.db for a moment (its watchdog stops it within a second or two), so stop
 * it here and say so, then remove the lock. Quiet when there is nothing stale.
 */
export async function clearStaleLock(lockFile: string): Promise<void> {
  const stale: LockInfo | undefined = readLockFile(lockFile);
  if (!stale || processAlive(stale.pid)) return;
  let stopped = '';
  const orphan = stale.temporalPid;
  if (orphan !== undefined && processAlive(orphan)) {
    signalGroup(orphan, 'SIGTERM');
    const deadline = Date.now() + 10_000;
    while (processAlive(orphan) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (processAlive(orphan)) signalGroup(orphan, 'SIGKILL');
    stopped = ` and stopped the Temporal dev server (pid ${orphan}) it left running`;
  }
  removeStaleLock(lockFile, stale);
  process.stderr.write(
    `gleaner: the previous gleaner process (pid ${stale.pid}) ended without cleaning up; cleared its lock ${lockFile}${stopped}\n`,
  );
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    // The dev server leads its own process group (spawned detached).
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {}
  }
}
