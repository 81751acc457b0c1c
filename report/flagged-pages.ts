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

export interface FlaggedPagesReport {
  /** Pages of the whole store by flag. */
  byFlag: Record<string, number>;
  /** Up to five pages a flag, with the reason it was given. */
  samples: { flag: string; url: string; reason: string }[];
}

/** `gleaner report`'s flagged pages: every crawl's, since the report describes the whole store. */
export async function flaggedPagesReport(db: Queryable): Promise<FlaggedPagesReport> {
  const counts = await db.query<{ flag: string; n: string }>(
    `SELECT f.flag, count(*)::text AS n FROM pages p, unnest(p.flags) AS f(flag)
      WHERE p.flags <> '{}' GROUP BY f.flag ORDER BY f.flag`,
  );
  const samples = await db.query<{ flag: string; url: string; reason: string | null }>(
    `SELECT flag, url, reason FROM (
       SELECT f.flag, p.url, p.flag_reasons ->> f.flag AS reason,
              row_number() OVER (PARTITION BY f.flag ORDER BY p.url) AS n
         FROM pages p, unnest(p.flags) AS f(flag) WHERE p.flags <> '{}') s
      WHERE n <= 5 ORDER BY flag, url`,
  );
  return {
    byFlag: Object.fromEntries(counts.rows.map((row) => [row.flag, Number(row.n)])),
    samples: samples.rows.map((row) => ({ flag: row.flag, url: row.url, reason: row.reason ?? '' })),
  };
}
