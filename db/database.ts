/**
 * The one storage seam: activities, the CLI and the API talk to `Database`, never to a driver,
 * so the same code runs on native Postgres (pg) and on the embedded PGlite.
 */
export type SqlParam = string | number | boolean | null | Buffer | Date | readonly unknown[] | object;

export interface QueryResult<Row> {
  rows: Row[];
  rowCount: number;
}

export interface Queryable {
  query<Row = Record<string, unknown>>(sql: string, params?: readonly SqlParam[]): Promise<QueryResult<Row>>;
}

export interface Database extends Queryable {
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
  readonly kind: 'postgres' | 'pglite';
}

/** The database could not be reached or refused the connection: a clear, user-facing failure. */
export class DatabaseUnavailableError extends Error {
  override readonly name = 'DatabaseUnavailableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
