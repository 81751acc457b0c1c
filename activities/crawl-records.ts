/** Crawl bookkeeping in Postgres: the crawl row, its seed claims, its final summary. */
import type { Database } from '../db/database';
import { originOf } from '../domain/url';
import { countFlaggedPages } from '../report/flagged-pages';
import { countPagesByType } from '../report/pages-by-type';
import { releaseOrphanCopies } from './orphan-copies';
import { settleRecrawl } from './recrawl-finish';
import { compileSpecScope } from './scope-cache';
import type {
  FinishCrawlInput,
  RegisterCrawlInput,
  RegisterCrawlResult,
  ReleaseOrphanCopiesInput,
} from './types';

export function createCrawlRecords({ db }: { db: Database }) {
  return {
    async registerCrawl({ spec, seeds }: RegisterCrawlInput): Promise<RegisterCrawlResult> {
      // A spec started around `gleaner` (the Temporal CLI or UI) is checked only by the workflow's
      // schema: a scope the workers cannot compile fails the crawl here, at once and in words, where
      // it used to fail every activity that needed it while the crawl waited for ever.
      compileSpecScope(spec);
      return db.transaction(async (tx) => {
        await tx.query('INSERT INTO crawls (id, spec) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', [
          spec.crawlId,
          JSON.stringify(spec),
        ]);
        await tx.query(
          `INSERT INTO crawl_urls (crawl_id, url, origin, depth, discovered_from)
           SELECT $1::text, u.url, u.origin, 0, NULL FROM unnest($2::text[], $3::text[]) AS u(url, origin)
           ON CONFLICT (crawl_id, url) DO NOTHING`,
          [spec.crawlId, seeds, seeds.map(originOf)],
        );
        // Seeds are claimed by nobody (discovered_from NULL), so a retry returns the same set.
        const claimed = await tx.query<{ url: string }>(
          'SELECT url FROM crawl_urls WHERE crawl_id = $1 AND discovered_from IS NULL AND url = ANY($2::text[])',
          [spec.crawlId, seeds],
        );
        const claimedSet = new Set(claimed.rows.map((row) => row.url));
        return { claimed: [...new Set(seeds)].filter((seed) => claimedSet.has(seed)) };
      });
    },

    releaseOrphanCopies: (input: ReleaseOrphanCopiesInput) => releaseOrphanCopies(db, input),

    async finishCrawl({ crawlId, summary }: FinishCrawlInput): Promise<void> {
      await settleRecrawl(db, crawlId);
      const pagesByType = await countPagesByType(db, crawlId);
      const pagesFlagged = await countFlaggedPages(db, crawlId);
      await db.query('UPDATE crawls SET status = $2, finished_at = now(), summary = $3 WHERE id = $1', [
        crawlId,
        summary.status,
        JSON.stringify({ ...summary, pagesByType, pagesFlagged }),
      ]);
    },
  };
}
