/**
 * The crawl's pages by what they are (`pages.source_type`, migration 017): `html` or a document type.
 * The summary's `pagesByType`; read from the store, since the workflows count pages, not types.
 *
 * Every page the crawl stored or visited and found still there: on a recrawl, a page that answered
 * 304 or the same bytes keeps the crawl that stored it last, so counting only `pages.crawl_id` gave
 * `{"html":6,"text":1}` beside 16 unchanged pages.
 */
import type { Queryable } from '../db/database';

export async function countPagesByType(db: Queryable, crawlId: string): Promise<Record<string, number>> {
  const result = await db.query<{ source_type: string; count: string }>(
    `SELECT source_type, count(*)::text AS count FROM pages
      WHERE id IN (SELECT id FROM pages WHERE crawl_id = $1
                   UNION SELECT page_id FROM page_changes WHERE crawl_id = $1 AND change <> 'removed')
        AND removed_at IS NULL
      GROUP BY source_type ORDER BY source_type`,
    [crawlId],
  );
  return Object.fromEntries(result.rows.map((row) => [row.source_type, Number(row.count)]));
}
