/**
 * The crawl's stored pages by what they are (`pages.source_type`, migration 017): `html` or a document
 * type. The summary's `pagesByType`; read from the store, since the workflows count pages, not types.
 */
import type { Queryable } from '../db/database';

export async function countPagesByType(db: Queryable, crawlId: string): Promise<Record<string, number>> {
  const result = await db.query<{ source_type: string; count: string }>(
    `SELECT source_type, count(*)::text AS count FROM pages WHERE crawl_id = $1
      GROUP BY source_type ORDER BY source_type`,
    [crawlId],
  );
  return Object.fromEntries(result.rows.map((row) => [row.source_type, Number(row.count)]));
}
