/**
 * rel=canonical copies whose canonical page the crawl never made searchable. A page naming another
 * URL as its canonical is filed as that page's copy when it is stored, before the canonical page is
 * fetched (so no copy is chunked and embedded only to be dropped a moment later). When the canonical
 * page then fails (404, robots.txt, a type the crawl does not take), or the budget or depth stops
 * the crawl before it, the copy's content was searchable nowhere. At the crawl's end such copies are
 * released: their duplicate marks cleared, a `changed` event each in the feed, and their page ids
 * handed back for the crawl workflow to index (workflows/crawl-effects.ts).
 *
 * Exact and near copies likewise, once their original left search (a 404, a redirect, noindex):
 * a copy is re-examined on every 200, but one that answers 304, or was revisited before its original
 * went, stayed the copy of a tombstone, its content searchable nowhere.
 */

import { appendChangeEvents } from '../db/change-events';
import type { Database } from '../db/database';
import type { ReleaseOrphanCopiesInput, ReleaseOrphanCopiesResult } from './types';

/**
 * Copies released at one crawl's end, at most: each batch of 16 adds a few events to the crawl
 * workflow's last run, which cannot continue as new there; this keeps it to ~500 batches. The
 * rest stay copies until the next crawl that visits them releases them.
 */
export const MAX_RELEASED = 8_000;

export async function releaseOrphanCopies(
  db: Database,
  { crawlId }: ReleaseOrphanCopiesInput,
): Promise<ReleaseOrphanCopiesResult> {
  return db.transaction(async (tx) => {
    // Visited by this crawl: stored by it, or answered it with a 304 (a page_changes row either way).
    // Kept as a copy while its canonical page is live and searchable, or a copy of one that is.
    const { rows } = await tx.query<{ id: string; origin: string }>(
      `WITH orphans AS (
         SELECT p.id FROM pages p
          WHERE p.duplicate_kind IS NOT NULL AND p.removed_at IS NULL AND NOT p.noindex
            AND (p.crawl_id = $1 OR EXISTS (SELECT 1 FROM page_changes pc WHERE pc.crawl_id = $1 AND pc.page_id = p.id))
            AND CASE WHEN p.duplicate_kind = 'canonical'
                  THEN NOT EXISTS (SELECT 1 FROM pages c
                                    WHERE c.url = p.canonical_url AND c.id <> p.id AND c.removed_at IS NULL
                                      AND NOT c.noindex AND c.duplicate_kind IS DISTINCT FROM 'canonical')
                  -- An exact or near copy's original is a live page that is no copy itself.
                  ELSE NOT EXISTS (SELECT 1 FROM pages o
                                    WHERE o.id = p.duplicate_of AND o.removed_at IS NULL AND NOT o.noindex
                                      AND o.duplicate_kind IS NULL)
                END
          ORDER BY p.id LIMIT $2)
       -- The extraction goes too: a near copy kept its own, and page-content skips a page whose
       -- extraction matches its body, so a released copy would be counted and never chunked.
       UPDATE pages p SET duplicate_of = NULL, duplicate_kind = NULL, canonical_url = NULL, extracted_hash = NULL
         FROM orphans o WHERE p.id = o.id
       RETURNING p.id::text, p.origin`,
      [crawlId, MAX_RELEASED],
    );
    const ids = rows.map((row) => Number(row.id)).sort((a, b) => a - b);
    // A page that was a copy and is now a page of its own is `changed` to a reader of the feed, as
    // when a recrawl finds a copy's original gone (recrawl-visits.ts).
    await appendChangeEvents(
      tx,
      ids.map((pageId) => ({ kind: 'changed' as const, pageId, crawlId })),
    );
    const byOrigin = new Map<string, number[]>();
    for (const row of rows) {
      const list = byOrigin.get(row.origin) ?? [];
      list.push(Number(row.id));
      byOrigin.set(row.origin, list);
    }
    return {
      released: [...byOrigin]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([origin, pageIds]) => ({ origin, pageIds: pageIds.sort((a, b) => a - b) })),
    };
  });
}
