/** The quality gate's counts for a crawl (activities/quality-flags.ts writes the flags). */
import type { Queryable } from '../db/database';

/** Flagged pages of a crawl, by flag: the summary's and `gleaner report`'s `pagesFlagged`. */
export async function countFlaggedPages(db: Queryable, crawlId: string): Promise<Record<string, number>> {
  const { rows } = await db.query<{ flag: string; n: string }>(
    `SELECT f.flag, count(*)::text AS n FROM pages p, unnest(p.flags) AS f(flag)
      WHERE p.crawl_id = $1 AND p.flags <> '{}' GROUP BY f.flag ORDER BY f.flag`,
    [crawlId],
  );
  return Object.fromEntries(rows.map((row) => [row.flag, Number(row.n)]));
}
