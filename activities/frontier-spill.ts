/**
 * Frontier spill: an origin workflow keeps at most a bounded number of URLs in its frontier (and
 * so in its history). The fetch activity hands back only as many same-origin discoveries as the
 * frontier has room for and marks the rest `spilled` in `crawl_urls`, in the transaction that
 * claims them; the workflow takes them back in pages with `nextSpilledUrls` as its frontier drains.
 * Claims stay keyed by (crawl, canonical URL), so a URL is claimed, spilled and taken once.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { Database, Queryable } from '../db/database';
import { originOf } from '../domain/url';
import { checkPageLimit, checkUrlCount } from './claim-paging';
import type {
  DiscoveredUrl,
  NextSpilledUrlsInput,
  NextSpilledUrlsResult,
  SpillUrlsInput,
  SpillUrlsResult,
} from './types';

export interface OwnedClaim extends DiscoveredUrl {
  spilled: boolean;
}

export function createFrontierSpill({ db }: { db: Database }) {
  return {
    async nextSpilledUrls(input: NextSpilledUrlsInput): Promise<NextSpilledUrlsResult> {
      return nextSpilledUrlsCore(db, input);
    },
    async spillUrls(input: SpillUrlsInput): Promise<SpillUrlsResult> {
      return spillUrlsCore(db, input);
    },
  };
}

/**
 * Splits a page's claims (in claim order) into what goes back to the workflow and what waits in
 * Postgres. A claim spilled once stays spilled, so a retried attempt (or the render after a plain
 * fetch of the same URL) answers with the same kept URLs and never hands out a spilled one.
 * Other origins' URLs and `keep` (the page's own redirect target) are never spilled.
 */
export async function spillBeyondRoom(
  tx: Queryable,
  crawlId: string,
  pageUrl: string,
  room: number,
  owned: readonly OwnedClaim[],
  keep: string,
): Promise<{ discovered: DiscoveredUrl[]; spilled: number }> {
  const origin = originOf(pageUrl);
  const discovered: DiscoveredUrl[] = [];
  const toSpill: string[] = [];
  let spilled = 0;
  let kept = 0;
  for (const row of owned) {
    const item = { url: row.url, origin: row.origin, depth: row.depth };
    if (row.origin !== origin || row.url === keep) discovered.push(item);
    else if (row.spilled) spilled++;
    else if (kept < room) {
      kept++;
      discovered.push(item);
    } else {
      toSpill.push(row.url);
      spilled++;
    }
  }
  if (toSpill.length > 0) {
    await tx.query('UPDATE crawl_urls SET spilled = true WHERE crawl_id = $1 AND url = ANY($2::text[])', [
      crawlId,
      toSpill,
    ]);
  }
  return { discovered, spilled };
}

/**
 * Takes up to `limit` of the origin's waiting spilled URLs, shallowest first, and names them with
 * `take`. A take already made answers with its own rows, so an attempt that died after committing
 * loses nothing and hands nothing out twice.
 */
export async function nextSpilledUrlsCore(
  db: Database,
  input: NextSpilledUrlsInput,
): Promise<NextSpilledUrlsResult> {
  checkPageLimit(input.limit);
  if (!Number.isSafeInteger(input.take) || input.take < 1)
    throw ApplicationFailure.nonRetryable('take must be a positive integer', 'InvalidInput');
  const origin = originOf(input.origin);
  const readTake = async (tx: Queryable) =>
    (
      await tx.query<{ url: string; depth: number }>(
        `SELECT url, depth FROM crawl_urls WHERE crawl_id = $1 AND origin = $2 AND spill_take = $3
          ORDER BY depth, discovered_at, url`,
        [input.crawlId, origin, input.take],
      )
    ).rows;
  return db.transaction(async (tx) => {
    const already = await readTake(tx);
    if (already.length > 0) return { items: already };
    await tx.query(
      `UPDATE crawl_urls SET spill_take = $3
        WHERE crawl_id = $1 AND url IN (
          SELECT url FROM crawl_urls
           WHERE crawl_id = $1 AND origin = $2 AND spilled AND spill_take IS NULL
           ORDER BY depth, discovered_at, url LIMIT $4)`,
      [input.crawlId, origin, input.take, input.limit],
    );
    return { items: await readTake(tx) };
  });
}

/**
 * Parks URLs already in the workflow's frontier (another origin's links, arriving by signal) in
 * Postgres: spilled again and untaken, so a later take brings them back. Idempotent.
 */
export async function spillUrlsCore(db: Database, input: SpillUrlsInput): Promise<SpillUrlsResult> {
  checkUrlCount(input.urls.length);
  const origin = originOf(input.origin);
  const { rows } = await db.query<{ url: string }>(
    `UPDATE crawl_urls SET spilled = true, spill_take = NULL
      WHERE crawl_id = $1 AND origin = $2 AND url = ANY($3::text[])
      RETURNING url`,
    [input.crawlId, origin, input.urls],
  );
  const parked = new Set(rows.map((row) => row.url));
  return { missing: input.urls.filter((url) => !parked.has(url)) };
}
