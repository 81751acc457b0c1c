/**
 * What a recrawl settles once every page of the crawl was visited: which visited pages still
 * answer but are no longer linked from any live page (Firecrawl's "no longer linked"), and which
 * rel=canonical copies now have their canonical page in the store.
 */
import type { Database } from '../db/database';

export async function settleRecrawl(db: Database, crawlId: string): Promise<void> {
  // Seeds are where the crawl starts, linked or not.
  await db.query(
    `UPDATE page_changes pc SET unlinked = true
      WHERE pc.crawl_id = $1 AND pc.change <> 'removed'
        AND NOT EXISTS (SELECT 1 FROM crawl_urls cu
                         WHERE cu.crawl_id = $1 AND cu.url = pc.url AND cu.discovered_from IS NULL)
        AND NOT EXISTS (SELECT 1 FROM links l JOIN pages src ON src.id = l.from_page_id
                         WHERE l.to_url = pc.url AND src.id <> pc.page_id
                           AND src.removed_at IS NULL AND src.duplicate_kind IS NULL)`,
    [crawlId],
  );
  await db.query(
    `UPDATE pages p SET duplicate_of = c.id
       FROM pages c
      WHERE p.duplicate_kind = 'canonical' AND p.duplicate_of IS NULL AND c.url = p.canonical_url AND c.id <> p.id`,
  );
}
