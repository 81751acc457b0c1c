/** Fetch-log rows written as a crawl writes them, for tests of what reads the log (reports, counts). */
import type { Queryable } from '../db/database';

/** One row per `[path, outcome, status]` under `origin`, in the order given. */
export async function insertFetches(
  db: Queryable,
  crawlId: string,
  origin: string,
  rows: ReadonlyArray<[path: string, outcome: string, status?: number]>,
): Promise<void> {
  for (const [p, outcome, status] of rows) {
    await db.query(
      `INSERT INTO fetches (crawl_id, url, outcome, status, started_at) VALUES ($1, $2, $3, $4, now())`,
      [crawlId, `${origin}${p}`, outcome, status ?? null],
    );
  }
}
