/**
 * Runs our migrations (db/migrate.ts, the same code every opener runs) on a PGlite instance that
 * db/pglite-initdb.mjs has just created in its short-lived child process: how the migrated template
 * (db/pglite-template.ts) is made. Loaded by that plain-JavaScript child, from the compiled CLI
 * build or through tsx, so it is a body of its own (scripts/build-cli.ts lists it).
 */
import type { PGlite } from '@electric-sql/pglite';
import type { Database, Queryable, QueryResult, SqlParam } from './database';
import { migrate } from './migrate';

/**
 * `pg` as a `Database`. The child is PGlite's only user, so none of PgliteDatabase's socket gating
 * applies; the mapping of results is the same.
 */
function asDatabase(pg: PGlite): Database {
  const queryOn =
    (target: Pick<PGlite, 'query'>) =>
    async <Row>(sql: string, params: readonly SqlParam[] = []): Promise<QueryResult<Row>> => {
      const result = await target.query<Row>(sql, params as unknown[]);
      return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
    };
  return {
    kind: 'pglite',
    query: queryOn(pg),
    exec: async (sql) => {
      await pg.exec(sql);
    },
    transaction: <T>(fn: (tx: Queryable) => Promise<T>) => pg.transaction((tx) => fn({ query: queryOn(tx) })),
    // The child closes PGlite itself, after this returns.
    close: async () => {},
  };
}

/** Applies every migration to the freshly initialised `pg`; returns the versions applied. */
export function migrateNewStore(pg: PGlite): Promise<number[]> {
  return migrate(asDatabase(pg));
}
