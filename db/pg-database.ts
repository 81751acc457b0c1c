import pg from 'pg';
import {
  type Database,
  DatabaseUnavailableError,
  type Queryable,
  type QueryResult,
  type SqlParam,
} from './database';

// int8 (bigint ids, counts) as numbers: ours stay far below 2^53.
pg.types.setTypeParser(20, (value) => Number.parseInt(value, 10));

const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'ETIMEDOUT',
  'ECONNRESET',
  'EHOSTUNREACH',
  '57P01',
  '57P03',
  '3D000',
  '28P01',
  '28000',
]);

export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code;
  return (
    (code !== undefined && CONNECTION_ERROR_CODES.has(code)) ||
    /Connection terminated|connect ECONNREFUSED/.test(String(error))
  );
}

function wrap(error: unknown, url: string): never {
  if (isConnectionError(error)) {
    throw new DatabaseUnavailableError(
      `database unavailable at ${redact(url)}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  throw error;
}

/**
 * Hides the passwords in a connection string (or in a message quoting some) before it reaches a
 * log, a terminal or an error: `user:password@` in a URL, and `password=` as a URL parameter or
 * a libpq key/value setting.
 */
export function redact(text: string): string {
  return text
    .replace(/(\/\/[^:/@\s]+:)[^\s]*?@(?=[^@\s]*$|[^@\s]*\s)/g, '$1***@')
    .replace(/\b(password|passwd)=(?:'(?:[^'\\]|\\.)*'|[^&\s]*)/gi, '$1=***');
}

export class PgDatabase implements Database {
  readonly kind = 'postgres' as const;
  private readonly pool: pg.Pool;

  constructor(
    private readonly url: string,
    options: { maxConnections?: number } = {},
  ) {
    this.pool = new pg.Pool({
      connectionString: url,
      max: options.maxConnections ?? 10,
      connectionTimeoutMillis: 10_000,
      idleTimeoutMillis: 30_000,
    });
    // An idle client losing its server must not crash the process; the next query reports it.
    this.pool.on('error', () => {});
    // pg-pool hears a checked-out client's 'error' only once per query; a server shutdown can emit
    // a second one (seen once in the db-outage test: "terminating connection due to administrator
    // command" as an uncaught exception). Every client gets a listener of its own for its whole
    // life; the failing query still reports the error to its caller.
    this.pool.on('connect', (client) => client.on('error', () => {}));
  }

  async query<Row>(sql: string, params: readonly SqlParam[] = []): Promise<QueryResult<Row>> {
    try {
      const result = await this.pool.query(sql, params as unknown[]);
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
    } catch (error) {
      return wrap(error, this.url);
    }
  }

  async exec(sql: string): Promise<void> {
    await this.query(sql);
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      return wrap(error, this.url);
    }
    // A checked-out client whose server goes away emits 'error' even between queries; unheard,
    // that would crash the process. Remember it and destroy the client on release instead.
    let broken: Error | undefined;
    const onError = (error: Error) => {
      broken = error;
    };
    client.on('error', onError);
    const tx: Queryable = {
      query: async <Row>(sql: string, params: readonly SqlParam[] = []) => {
        const result = await client.query(sql, params as unknown[]);
        return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
      },
    };
    try {
      await client.query('BEGIN');
      const value = await fn(tx);
      await client.query('COMMIT');
      return value;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      return wrap(error, this.url);
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
