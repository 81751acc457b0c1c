/**
 * A crawl of pages already in the store is a recrawl: every known page of the origin that is in
 * the crawl's scope is claimed for the crawl (`crawl_urls.source = 'store'`, with when it is due),
 * and the origin workflow pages through those claims due-first, straight from Postgres, like
 * sitemap claims — so thousands of known URLs never sit in workflow history at once.
 *
 * Claiming every known page before the first page is fetched also means links to them are never
 * claimed a second time, so `onlyDue` can leave the pages that are not due unvisited.
 */
import type { Database } from '../db/database';
import { CONTENT_TYPES } from '../domain/crawl-spec';
import { isCrawlable } from '../domain/crawlable';
import { originOf } from '../domain/url';
import { checkPageLimit, keysetPage } from './claim-paging';
import { withHeartbeat } from './heartbeat';
import { loadCrawlScope } from './scope-cache';
import type {
  ClaimKnownPagesInput,
  ClaimKnownPagesResult,
  NextKnownUrlsInput,
  NextKnownUrlsResult,
} from './types';

/** Known pages read per query while claiming. */
const CLAIM_BATCH = 1000;

export function createRecrawlFrontier({ db }: { db: Database }) {
  return {
    async claimKnownPages(input: ClaimKnownPagesInput): Promise<ClaimKnownPagesResult> {
      // A pass over a big origin's pages may take minutes: the beat lets a lost worker's claim be
      // retried after the heartbeat timeout instead of the whole start-to-close timeout.
      return withHeartbeat(() => claimKnownPagesCore(db, input));
    },
    async nextKnownUrls(input: NextKnownUrlsInput): Promise<NextKnownUrlsResult> {
      return nextKnownUrlsCore(db, input);
    },
  };
}

export async function claimKnownPagesCore(
  db: Database,
  input: ClaimKnownPagesInput,
): Promise<ClaimKnownPagesResult> {
  const origin = originOf(input.origin);
  // Widened by seed redirects: a moved origin's known pages are its whole frontier on a recrawl.
  const inScope = await loadCrawlScope(db, input.crawlId, input.spec);
  // A sitemap claim of a known page becomes a store claim: due now (first) when the sitemap's
  // lastmod is newer than our copy, else when the page's own revisit interval says.
  await db.query(
    `UPDATE crawl_urls cu
        SET source = 'store',
            due_at = CASE WHEN cu.lastmod IS NOT NULL AND cu.lastmod > p.fetched_at THEN '-infinity'::timestamptz
                          ELSE COALESCE(p.next_visit_at, '-infinity'::timestamptz) END
       FROM pages p
      WHERE cu.crawl_id = $1 AND cu.origin = $2 AND cu.source = 'sitemap' AND p.url = cu.url`,
    [input.crawlId, origin],
  );
  let afterId = 0;
  for (;;) {
    const { rows } = await db.query<{ id: string; url: string; depth: number; next_visit_at: Date | null }>(
      `SELECT id::text, url, depth, next_visit_at FROM pages
        WHERE origin = $1 AND id > $2 ORDER BY id LIMIT $3`,
      [origin, afterId, CLAIM_BATCH],
    );
    if (rows.length === 0) break;
    afterId = Number(rows.at(-1)?.id);
    const contentTypes = input.spec.contentTypes ?? CONTENT_TYPES;
    const wanted = rows.filter(
      (row) => row.depth <= input.spec.maxDepth && isCrawlable(row.url, inScope, contentTypes),
    );
    if (wanted.length === 0) continue;
    await db.query(
      `INSERT INTO crawl_urls (crawl_id, url, origin, depth, discovered_from, source, due_at)
       SELECT $1::text, u.url, $2::text, u.depth, 'store', 'store', COALESCE(u.due_at, '-infinity'::timestamptz)
         FROM unnest($3::text[], $4::int[], $5::timestamptz[]) AS u(url, depth, due_at)
       ON CONFLICT (crawl_id, url) DO NOTHING`,
      [
        input.crawlId,
        origin,
        wanted.map((row) => row.url),
        wanted.map((row) => row.depth),
        wanted.map((row) => row.next_visit_at),
      ],
    );
  }
  const counted = await db.query<{ total: number; due: number }>(
    `SELECT count(*)::int AS total, count(*) FILTER (WHERE due_at <= now())::int AS due
       FROM crawl_urls WHERE crawl_id = $1 AND origin = $2 AND source = 'store'`,
    [input.crawlId, origin],
  );
  return { claimedTotal: counted.rows[0]?.total ?? 0, due: counted.rows[0]?.due ?? 0 };
}

/**
 * One page of the origin's store claims, due first (earliest due time, then url), after
 * `afterUrl`. With `onlyDue`, claims not due yet are left out (and so never visited).
 */
export async function nextKnownUrlsCore(
  db: Database,
  input: NextKnownUrlsInput,
): Promise<NextKnownUrlsResult> {
  checkPageLimit(input.limit);
  const origin = originOf(input.origin);
  const { rows } = await db.query<{ url: string; depth: number; due: boolean }>(
    `SELECT url, depth, due_at <= now() AS due FROM crawl_urls
      WHERE crawl_id = $1 AND origin = $2 AND source = 'store'
        AND ($3::text IS NULL OR (due_at, url) > (SELECT due_at, url FROM crawl_urls WHERE crawl_id = $1 AND url = $3))
        AND (NOT $4 OR due_at <= now())
      ORDER BY due_at, url
      LIMIT $5`,
    [input.crawlId, origin, input.afterUrl ?? null, input.onlyDue, input.limit],
  );
  return keysetPage(
    rows.map((row) => ({ url: row.url, depth: row.depth, due: row.due })),
    input.limit,
  );
}
