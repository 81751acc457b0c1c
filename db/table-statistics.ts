/**
 * Planner statistics for the embedded store. A Postgres server keeps them fresh with autovacuum;
 * PGlite runs Postgres in single-user mode, where autovacuum never runs, so a corpus crawled into
 * the embedded store was never ANALYZEd and every plan ran on the planner's default guesses.
 *
 * Measured on the demo corpus (skopt-0.9, 150 pages, 576 chunks): without statistics the search
 * function's summary leads looked up each matched page's first chunk through a bitmap AND with the
 * `chunks.ts_config` index, which holds every chunk, 0.28 ms per page and growing with the corpus;
 * with them it reads the (page_id, position) index, 0.01 ms. A warm search took 57 ms before and
 * 41 ms after.
 */
import type { Queryable } from './database';

/**
 * A table whose size moved this far from the size its statistics were taken at is analyzed again:
 * autovacuum's own rule (a fifth of the table, plus a floor for small ones), read from sizes because
 * single-user Postgres keeps no modification counters across restarts.
 */
const STALE_FRACTION = 0.2;
const STALE_FLOOR_PAGES = 8;

/**
 * ANALYZEs the store's own tables that were never analyzed or grew or shrank since: ANALYZE reads a
 * sample of at most 30,000 rows a table, so this costs about the same on any corpus. Returns the
 * tables analyzed.
 */
export async function analyzeStaleTables(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT quote_ident(c.relname) AS name
       FROM pg_class c
      WHERE c.relnamespace = 'public'::regnamespace
        AND c.relkind = 'r'
        AND pg_relation_size(c.oid) > 0
        AND (c.reltuples < 0
             OR abs(pg_relation_size(c.oid) / current_setting('block_size')::bigint - c.relpages)
                > $1::float8 * c.relpages + $2::integer)
      ORDER BY c.relname`,
    [STALE_FRACTION, STALE_FLOOR_PAGES],
  );
  const names = rows.map((row) => row.name);
  if (names.length > 0) await db.query(`ANALYZE ${names.join(', ')}`);
  return names;
}
