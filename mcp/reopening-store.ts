/**
 * The store of a long-lived `gleaner mcp`, reopened when its connection is lost. On the embedded
 * default the server often starts while a crawl or `gleaner dev` holds the store, and reads through
 * that process's socket; when that process ends the socket goes with it. Every MCP tool only reads,
 * so a query that finds the database gone opens the store again the same way (now directly, or
 * through the next holder's socket) and is retried once, instead of every later call failing until
 * the agent's client restarts the server.
 */
import {
  type Database,
  DatabaseUnavailableError,
  type Queryable,
  type QueryResult,
  type SqlParam,
} from '../db/database';

export class ReopeningStore implements Database {
  private current: Promise<Database>;
  /** The kind of the store open now: a socket (postgres) may give way to PGlite opened directly. */
  kind: Database['kind'];

  constructor(
    first: Database,
    private readonly open: () => Promise<Database>,
    private readonly onReopen: (error: Error) => void = () => {},
  ) {
    this.current = Promise.resolve(first);
    this.kind = first.kind;
  }

  async query<Row = Record<string, unknown>>(
    sql: string,
    params?: readonly SqlParam[],
  ): Promise<QueryResult<Row>> {
    const db = await this.current;
    try {
      return await db.query<Row>(sql, params);
    } catch (error) {
      if (!(error instanceof DatabaseUnavailableError)) throw error;
      return (await this.reopen(db, error)).query<Row>(sql, params);
    }
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return (await this.current).transaction(fn);
  }

  async exec(sql: string): Promise<void> {
    return (await this.current).exec(sql);
  }

  async close(): Promise<void> {
    await (await this.current.catch(() => undefined))?.close();
  }

  /** One reopening for all the queries that failed on the same lost connection. */
  private reopen(lost: Database, error: Error): Promise<Database> {
    const next = this.current.then(async (db) => {
      if (db !== lost) return db;
      this.onReopen(error);
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
