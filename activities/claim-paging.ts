/**
 * How an origin workflow pages in URLs that wait in `crawl_urls` rather than in its history:
 * sitemap claims (sitemaps.ts), known pages of a recrawl (recrawl-frontier.ts) and spilled
 * discoveries (frontier-spill.ts) all hand them out at most `MAX_CLAIM_PAGE` a call, and the
 * first two page by a keyset cursor: the last URL handed out.
 */
import { ApplicationFailure } from '@temporalio/activity';

/** URLs per call at most, either way (paged in, or parked by `spillUrls`). */
export const MAX_CLAIM_PAGE = 500;

export function checkPageLimit(limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_CLAIM_PAGE)
    throw ApplicationFailure.nonRetryable(
      `limit must be an integer from 1 to ${MAX_CLAIM_PAGE}`,
      'InvalidInput',
    );
}

export function checkUrlCount(count: number): void {
  if (count > MAX_CLAIM_PAGE)
    throw ApplicationFailure.nonRetryable(`at most ${MAX_CLAIM_PAGE} URLs per call`, 'InvalidInput');
}

/** One keyset page: the rows, the cursor for the next call, and whether this page was the last. */
export function keysetPage<Item extends { url: string }>(
  items: Item[],
  limit: number,
): { items: Item[]; lastUrl?: string; done: boolean } {
  const last = items.at(-1);
  return { items, ...(last ? { lastUrl: last.url } : {}), done: items.length < limit };
}
