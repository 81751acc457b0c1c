/**
 * Whether a crawl id names a crawl of this store, for the commands and routes that narrow to one
 * (`export --crawl`, `search --crawl`, `context --crawl`, `changes --crawl`): a mistyped id used to
 * answer an empty result that looked like "nothing there".
 */
import type { Queryable } from './database';

/** Crawl ids shown to a user who gave an unknown one, newest first. */
const LATEST_SHOWN = 5;

/**
 * Undefined when `crawlId` is a crawl of this store (a crawls row, pages or change events of it); else the
 * reason, naming up to five of the store's latest crawl ids.
 */
export async function unknownCrawlReason(db: Queryable, crawlId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ known: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM crawls WHERE id = $1) OR EXISTS (SELECT 1 FROM pages WHERE crawl_id = $1)
            OR EXISTS (SELECT 1 FROM change_events WHERE crawl_id = $1) AS known`,
    [crawlId],
  );
  if (rows[0]?.known === true) return undefined;
  const { rows: recent } = await db.query<{ id: string }>(
    'SELECT id FROM crawls ORDER BY started_at DESC, id LIMIT $1',
    [LATEST_SHOWN],
  );
  const latest = recent.map((row) => row.id);
  return `no crawl "${crawlId}" in the store${latest.length > 0 ? `; latest crawls: ${latest.join(', ')}` : '; it holds no crawl'}`;
}
