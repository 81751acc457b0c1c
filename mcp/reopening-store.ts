/**
 * The store of a long-lived `gleaner mcp`, reopened when its connection is lost. On the embedded
 * default the server often starts while a crawl or `gleaner dev` holds the store, and reads through
 * that process's socket; when that process ends the socket goes with it. Every MCP tool only reads,
 * so a query that finds the database gone opens the store again the same way (now directly, or
 * through the next holder's socket) and is retried once, instead of every later call failing until
 * the agent's client restarts the server.
 *
 * It also lets go of a store it opened itself. PGlite is opened by one process only, and an agent's
 * client keeps `gleaner mcp` running for hours: holding the embedded store all that time would
 * refuse every `gleaner crawl` the user starts meanwhile. So a directly opened PGlite is closed
 * after `idleReleaseMs` without a query and opened again by the next one (through the socket of
 * whichever gleaner process holds it by then, or directly).
 */
import {
  type Database,
  DatabaseUnavailableError,
  type Queryable,
  type QueryResult,
  type SqlParam,
} from '../db/database';

export interface ReopeningStoreOptions {
  /** Close a directly opened PGlite after this long without a query. @default 30_000 */
  idleReleaseMs?: number;
  /** Told when a lost connection is replaced. */
  onReopen?: (error: Error) => void;
  /** Told when an idle PGlite is let go. */
  onRelease?: () => void;
}

export class ReopeningStore implements Database {
  /** The open store, or undefined while released (the next query opens it). */
  private current: Promise<Database> | undefined;
  private inFlight = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** A release in progress: the next opening waits for it, or it would find this process's own lock. */
  private releasing: Promise<void> | undefined;
  /** Asked to let go (`releaseSoon`) while a query ran: the store closes when the last one ends. */
  private releaseRequested = false;
  private readonly idleReleaseMs: number;
  /** The kind of the store open now: a socket (postgres) may give way to PGlite opened directly. */
  kind: Database['kind'];

  constructor(
    first: Database,
    private readonly open: () => Promise<Database>,
    private readonly options: ReopeningStoreOptions = {},
  ) {
    this.current = Promise.resolve(first);
    this.kind = first.kind;
    this.idleReleaseMs = options.idleReleaseMs ?? 30_000;
    this.armIdleRelease();
  }

  async query<Row = Record<string, unknown>>(
    sql: string,
    params?: readonly SqlParam[],
  ): Promise<QueryResult<Row>> {
    return this.using(async (db) => {
      try {
        return await db.query<Row>(sql, params);
      } catch (error) {
        if (!(error instanceof DatabaseUnavailableError)) throw error;
        return (await this.reopen(db, error)).query<Row>(sql, params);
      }
    });
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.using((db) => db.transaction(fn));
  }

  async exec(sql: string): Promise<void> {
    return this.using((db) => db.exec(sql));
  }

  /**
   * Lets go of a store this process opened itself as soon as no query is running (another gleaner
   * process asked for it, infra/store-handover.ts); the next query opens it again.
   */
  releaseSoon(): void {
    if (this.kind !== 'pglite') return;
    this.releaseRequested = true;
    if (this.inFlight === 0) void this.release();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idleTimer);
    const current = this.current;
    this.current = undefined;
    await (await current?.catch(() => undefined))?.close();
  }

  /** Runs `work` on the open store (opening it if released), counted so it is never closed under it. */
  private async using<T>(work: (db: Database) => Promise<T>): Promise<T> {
    if (this.closed) throw new DatabaseUnavailableError('the store is closed');
    clearTimeout(this.idleTimer);
    this.inFlight += 1;
    try {
      if (!this.current) {
        await this.releasing;
        this.current ??= this.openCounted();
      }
      return await work(await this.current);
    } finally {
      this.inFlight -= 1;
      if (this.releaseRequested && this.inFlight === 0) void this.release();
      else this.armIdleRelease();
    }
  }

  private openCounted(): Promise<Database> {
    const opening = this.open().then((db) => {
      this.kind = db.kind;
      return db;
    });
    // A failed opening is not kept: the next query tries again.
    opening.catch(() => {
      if (this.current === opening) this.current = undefined;
    });
    return opening;
  }

  /** Only a PGlite this process opened holds the store's lock; a socket or a server holds nothing. */
  private armIdleRelease(): void {
    if (this.closed || this.inFlight > 0 || this.kind !== 'pglite' || !this.current) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => void this.release(), this.idleReleaseMs);
    // An idle timer is no reason to keep the process alive.
    this.idleTimer.unref();
  }

  private release(): Promise<void> {
    if (this.inFlight > 0 || !this.current) return Promise.resolve();
    this.releaseRequested = false;
    clearTimeout(this.idleTimer);
    const current = this.current;
    this.current = undefined;
    this.releasing = (async () => {
      await (await current.catch(() => undefined))?.close();
      this.options.onRelease?.();
    })().finally(() => {
      this.releasing = undefined;
    });
    return this.releasing;
  }

  /** One reopening for all the queries that failed on the same lost connection. */
  private reopen(lost: Database, error: Error): Promise<Database> {
    const previous = this.current ?? Promise.resolve(lost);
    const next = previous.then(async (db) => {
      if (db !== lost) return db;
      this.options.onReopen?.(error);
      await lost.close().catch(() => {});
      const reopened = await this.open();
      this.kind = reopened.kind;
      return reopened;
    });
    // A failed reopening is not kept: the next query tries again.
    this.current = next.catch(() => lost);
    return next;
  }
}
